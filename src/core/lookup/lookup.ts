/** The lookup core: one address in, the full `data` object out. No HTTP, no KV, no formatting. */

import type { CountryEnrichment } from "../place/country_facts.ts";
import { createEnrichment, type Enrichment } from "../place/warm.ts";
import { noTimeZone } from "../place/timezone.ts";
import { BadRequestError, invalidIpMessage, NotFoundError, quoteInput } from "../../base/errors.ts";
import { type ParsedIp, parseIp, parseIpOrReason } from "../../base/ip/parse.ts";
import { reservedRangeName } from "../../base/ip/reserved.ts";
import { formatNetwork } from "../../base/ip/cidr.ts";
import {
  type CrawlerVerdict,
  type RiskSignals,
  type RiskSource,
  securityOf,
} from "../../data/risk/security.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import type { CityRecord } from "../../data/mmdb/records.ts";
import type { MmdbDatabase } from "../../data/mmdb/reader.ts";
import { SlotTable } from "../../base/cache/slot_table.ts";
import type {
  Currency,
  FailedItem,
  Flag,
  GeoLocation,
  LookupResult,
  Security,
  TimeZoneInfo,
  UserAgent,
} from "../../base/types.ts";
import { createConnectionOf, NO_CONNECTION } from "./connection.ts";
import { effectiveCountry, toGeoLocation } from "./geo.ts";
import { createOverride } from "./override.ts";
import { createAsOf, securityAsOf } from "./as_of.ts";
import { createMatchedNetworks } from "./matched_networks.ts";
import { sharedPart } from "../../base/shared_part.ts";
import { createCrawlerJudge } from "./crawler.ts";
import { claimKey } from "../ua/crawler_claim.ts";
import { failedItem } from "./item_error.ts";

export interface LookupDeps {
  data: DataSet;
  /** The clock; tests pass a fixed one. */
  now: () => Date;
  parseUserAgent: (ua: string | null | undefined) => UserAgent;
  /** Overrides the data set's security sources (tests). */
  risk?: RiskSource;
  /** Country and time-zone caches; share warmed ones across lookups (see createEnrichment). */
  enrichment?: Enrichment;
}

export interface LookupOptions {
  /**
   * The request's user agent: parsed for `userAgent`, and read for a claim to be a
   * known crawler (`risk.crawler`, and a fake's `isThreat`); never cached with the address.
   */
  userAgent?: string | null;
  /**
   * A language the City database carries, or a tag that falls back to one (`de-DE` → `de`,
   * `zh` → `zh-CN`, `pt` → `pt-BR`); names it lacks fall back to English.
   */
  lang?: string | null;
  /**
   * The `get` selection: the opt-in `risk` and `network` are computed only when it names
   * them, and `timezone` (the clock read, the zone's facts) is left empty when it does not
   * name it (`timezone: false`).
   */
  selection?: {
    readonly risk: boolean;
    readonly network?: boolean;
    readonly timezone?: boolean;
  } | null;
  /** Answer `security` and `risk` from the lists as they stood at this time (src/data/history). */
  at?: Date | null;
}

/** What one City record yields, computed once per record and language. */
interface PlaceFacts {
  geoLocation: GeoLocation;
  timeZone: string | null;
  flag: Flag;
  currency: Currency;
}

/**
 * The lookup over one data set: an address given as text in, its result out.
 * Made once per data set (createLookup); a wrapper (the metrics' count,
 * src/service/ops/metrics.ts) extends it over the same parts.
 */
export class Lookup {
  readonly #parts: LookupParts;

  /** The lookup over `from`'s data set, or sharing the parts (caches, scans) of another lookup. */
  constructor(from: LookupDeps | Lookup) {
    this.#parts = from instanceof Lookup ? from.#parts : lookupParts(from);
  }

  /** The result of an address; throws InvalidIpError, NotFoundError or BadRequestError (lang). */
  find(ipText: string, options: LookupOptions = NO_OPTIONS): LookupResult {
    return this.#parts.find(ipText, options);
  }

  /**
   * The same lookup, with what the result was made from: what the compatible
   * APIs (src/service/compat) render in their own shapes. Throws as `find` does.
   */
  detail(ipText: string, options: LookupOptions = NO_OPTIONS): LookupDetail {
    return this.#parts.detail(ipText, options);
  }

  /**
   * The same lookup as a bulk item: an invalid address or one without data is
   * the failed item in place (InvalidIpError's or NotFoundError's status and
   * message), without an Error made and thrown: a log of many unknown addresses
   * pays for no stack traces. Other errors (a bad `lang`) are thrown as by `find`.
   * Callers use src/core/lookup/item.ts's lookupItem.
   */
  item(ipText: string, options: LookupOptions = NO_OPTIONS): LookupResult | FailedItem {
    return this.#parts.item(ipText, options);
  }

  /**
   * The crawler verdict on a user agent at an address whose security signals
   * are `signals` (what the lookup folds into `security` and `risk`); null when
   * the user agent claims no known crawler.
   */
  crawlerVerdict(
    signals: RiskSignals,
    userAgent: string | null | undefined,
  ): CrawlerVerdict | null {
    return this.#parts.crawlerVerdict(signals, userAgent);
  }

  /**
   * What an answer depends on of a user agent where it shows no part of it but
   * the crawler verdict: the claimed crawler, or "" (a cache key part); "" also
   * where the claim cannot change the answer (no crawler list installed and no `risk`).
   */
  claimKey(userAgent: string | null | undefined, options: LookupOptions = NO_OPTIONS): string {
    return this.#parts.claimKey(userAgent, options);
  }

  /**
   * Runs `scan` (synchronous: lookups) with the record caches of the data set
   * read but not filled (DataSet's withoutCacheFills): a streamed bulk answer's
   * batches, whose addresses are mostly met once. Without it, lookups fill them.
   */
  withoutCacheFills<T>(scan: () => T): T {
    return this.#parts.withoutCacheFills(scan);
  }
}

/** What a lookup is made of: its closures over one data set's caches. */
interface LookupParts {
  find(ipText: string, options: LookupOptions): LookupResult;
  detail(ipText: string, options: LookupOptions): LookupDetail;
  item(ipText: string, options: LookupOptions): LookupResult | FailedItem;
  crawlerVerdict(signals: RiskSignals, userAgent: string | null | undefined): CrawlerVerdict | null;
  claimKey(userAgent: string | null | undefined, options: LookupOptions): string;
  withoutCacheFills<T>(scan: () => T): T;
}

/** The options of a lookup given none (shared: the lookup only reads them). */
const NO_OPTIONS: LookupOptions = Object.freeze({});

/** One lookup's result and the parts of its sources that the result's layout folds away. */
export interface LookupDetail {
  readonly result: LookupResult;
  /** The City record as the database holds it (names in every language); shared, never mutate. */
  readonly city: CityRecord | null;
  /**
   * The network the answer holds for (`8.8.8.0/24`): the most specific of the
   * matched networks of the City and network databases that know the address.
   */
  readonly network: string;
  /** What the security sources say, hosting included (`security` folds it into isThreat). */
  readonly signals: RiskSignals;
}

/** A country's facts and its shared flag and currency parts, in one language. */
interface Country {
  facts: CountryEnrichment;
  flag: Flag;
  currency: Currency;
}

/** Where lookupParsed leaves the records it read, when a caller wants them. */
interface Seen {
  city: CityRecord | null;
  signals: RiskSignals;
}

const EMPTY_FLAG: Flag = sharedPart({ flag_Icon: null, flag_unicode: null });
const EMPTY_CURRENCY: Currency = sharedPart({
  code: null,
  symbol: null,
  name: null,
  name_plural: null,
  hex_unicode: null,
});

/** The lookup over a data set (see lookupParts): `new Lookup(deps)`. */
export function createLookup(deps: LookupDeps): Lookup {
  return new Lookup(deps);
}

/**
 * The parts of the lookup over a data set. Derived facts are cached:
 * decoded records by data offset (in the reader), places per decoded record
 * and language, connections per ASN record, country facts per country, time
 * zone facts per zone and minute.
 */
function lookupParts(deps: LookupDeps): LookupParts {
  const { data, now, parseUserAgent } = deps;
  const risk = deps.risk ?? data.risk;
  /** Streamed bulk scans running (withoutCacheFills): the front tables are read, not filled. */
  let scanning = 0;
  const connectionOf = createConnectionOf(data, () => scanning === 0);
  const { countries: countryFacts, timeZones: timeZoneInfo } = deps.enrichment ??
    createEnrichment();
  const languages = data.city?.metadata.languages.length ? data.city.metadata.languages : ["en"];
  const resolveLang = createLanguageResolver(languages);
  // Places per language, keyed by the decoded record object, which the reader's offset
  // cache shares: an entry lives exactly as long as its record does, and the record, shared
  // by every answer, is never written to. The language's map is looked up once per call
  // (usually the last one used).
  const places = new Map<string, WeakMap<CityRecord, PlaceFacts>>();
  let lastLang = "";
  let lastPlaces = new WeakMap<CityRecord, PlaceFacts>();
  const overridden = data.location ? createOverride(languages) : null;
  const asOf = createAsOf(data, now);
  const matchedNetworks = createMatchedNetworks(data, risk);
  const crawlers = createCrawlerJudge(data.crawlers ?? []);
  /** The verdict on the request's crawler claim: only read where it can change the answer. */
  const crawlerVerdict = (
    signals: RiskSignals,
    options: LookupOptions,
  ): CrawlerVerdict | null => {
    const ua = options.userAgent;
    // An `at` answer judges no claim: the crawler lists keep no history.
    if (!ua || options.at || (!crawlers.installed && !options.selection?.risk)) return null;
    return crawlers.verdict(signals, crawlers.claimOf(ua));
  };

  // A country's facts, and its flag and currency as one shared part each per country and
  // language, so their text is written once for all the places of the country (not once
  // per record), and a place made for a record asks the country's facts no more.
  const countries = new Map<string, Country>();
  const noCountry: Country = {
    facts: countryFacts(null),
    flag: EMPTY_FLAG,
    currency: EMPTY_CURRENCY,
  };
  const countryOf = (code: string | null, lang: string): Country => {
    if (code === null) return noCountry;
    const key = `${code} ${lang}`;
    let country = countries.get(key);
    if (!country) {
      const facts = countryFacts(code, lang);
      country = { facts, flag: sharedPart(facts.flag), currency: sharedPart(facts.currency) };
      // Bounded by the codes the enricher accepts ([A-Z]{2}) times the languages served.
      if (countries.size < COUNTRY_PARTS_LIMIT) countries.set(key, country);
    }
    return country;
  };

  const placeOf = (record: CityRecord, lang: string): PlaceFacts => {
    if (lang !== lastLang) {
      let byRecord = places.get(lang);
      if (!byRecord) places.set(lang, byRecord = new WeakMap());
      lastLang = lang;
      lastPlaces = byRecord;
    }
    const byRecord = lastPlaces;
    let place = byRecord.get(record);
    if (!place) {
      const { facts, flag, currency } = countryOf(effectiveCountry(record)?.iso_code ?? null, lang);
      place = Object.freeze({
        geoLocation: sharedPart(toGeoLocation(record, lang, facts)),
        // A record without a zone (1.1.1.1: registered country only) takes the country's sole zone.
        timeZone: record.location?.time_zone ?? facts.timeZone,
        flag,
        currency,
      });
      byRecord.set(record, place);
    }
    return place;
  };

  const lookupParsed = (ip: ParsedIp, options: LookupOptions, seen?: Seen): LookupResult => {
    const result = lookupOrMiss(ip, options, seen);
    if (result === null) throw new NotFoundError(ip.address, reservedRangeName(ip));
    return result;
  };

  let lastSignals: RiskSignals | null = null;
  let lastSecurity: Security | null = null;

  // Places by the City record's data offset and language, in front of the record cache and
  // the WeakMaps above: a hit skips both. Not filled while a streamed bulk answer scans
  // (withoutCacheFills): its addresses are mostly met once.
  const frontPlaces = new SlotTable<PlaceFacts>(FRONT_BITS);
  const placeAt = (city: MmdbDatabase<CityRecord>, offset: number, lang: string) => {
    let place = frontPlaces.get(offset, lang);
    if (place === undefined) {
      place = placeOf(city.recordAt(offset), lang);
      if (scanning === 0) frontPlaces.set(offset, place, lang);
    }
    return place;
  };

  /** The result, or null when no source knows the address. */
  const lookupOrMiss = (ip: ParsedIp, options: LookupOptions, seen?: Seen): LookupResult | null => {
    const lang = resolveLang(options.lang);
    const city = data.city;
    // The operator's geofeed, most specific entry first, wins over the City database.
    const own = data.location?.matches(ip, null)[0];
    let cityRecord: CityRecord | null = null;
    let place: PlaceFacts | null = null;
    if (own || seen) {
      cityRecord = city?.getBytes(ip.bytes) ?? null;
      if (own) cityRecord = overridden!(own, cityRecord);
      if (cityRecord) place = placeOf(cityRecord, lang);
    } else if (city) {
      const offset = city.recordOffset(ip.bytes);
      if (offset !== -1) place = placeAt(city, offset, lang);
    }
    const connection = connectionOf(ip);
    // Security feeds alone do not make an address found (FireHOL lists every bogon);
    // the operator's geofeed does.
    if (!place && connection === NO_CONNECTION) return null;
    const past = options.at ? asOf(options.at) : null;
    let signals = (past?.risk ?? risk).signals(ip, connection.asn_number);
    const verdict = crawlerVerdict(signals, options);
    if (verdict?.fake) signals = { ...signals, fakeCrawler: verdict.claim };
    // Without feeds every address has the same signals object: its verdict is kept.
    if (signals !== lastSignals) {
      lastSignals = signals;
      lastSecurity = securityOf(signals);
    }
    if (seen) {
      seen.city = cityRecord;
      seen.signals = signals;
    }
    const result: LookupResult = {
      ip: ip.address,
      geoLocation: place?.geoLocation ?? NO_GEOLOCATION,
      timezone: options.selection?.timezone === false
        ? NO_TIMEZONE
        : timeZoneInfo(place?.timeZone ?? null, now()),
      flag: place?.flag ?? EMPTY_FLAG,
      currency: place?.currency ?? EMPTY_CURRENCY,
      connection,
      userAgent: parseUserAgent(options.userAgent),
      security: past ? securityAsOf(lastSecurity!, past.asOf) : lastSecurity!,
    };
    if (options.selection?.risk) {
      result.risk = (past?.risk ?? risk).explain(ip, connection.asn_number, verdict);
    }
    if (options.selection?.network) result.network = matchedNetworks(ip, connection.asn_number);
    return result;
  };

  const networkDatabases = [data.city, data.asn, data.isp, data.domain, data.connectionType]
    .filter((db) => db !== null);
  /** The most specific matched network: within it, no database's answer changes. */
  const networkOf = (ip: ParsedIp): string => {
    let prefix = 0;
    for (const db of networkDatabases) {
      if (db.getBytes(ip.bytes) !== null) prefix = Math.max(prefix, db.prefixLength(ip.bytes));
    }
    return formatNetwork(ip, prefix);
  };

  const withoutCacheFills = data.withoutCacheFills;
  return {
    find: (ipText, options) => lookupParsed(parseIp(ipText), options),
    item: (ipText, options) => {
      const ip = parseIpOrReason(ipText);
      if (typeof ip === "string") return invalidItem(ipText, ip);
      return lookupOrMiss(ip, options) ?? notFoundItem(ipText, ip);
    },
    detail: (ipText, options) => {
      const ip = parseIp(ipText);
      const seen: Seen = { city: null, signals: NO_SIGNALS };
      const result = lookupParsed(ip, options, seen);
      return { result, city: seen.city, network: networkOf(ip), signals: seen.signals };
    },
    crawlerVerdict: (signals, userAgent) =>
      crawlerVerdict(signals, { userAgent, selection: RISK_SELECTION }),
    claimKey: (userAgent, options) =>
      userAgent && (crawlers.installed || options.selection?.risk)
        ? claimKey(crawlers.claimOf(userAgent))
        : "",
    withoutCacheFills: withoutCacheFills
      ? (scan) => {
        scanning++;
        try {
          return withoutCacheFills(scan);
        } finally {
          scanning--;
        }
      }
      : (scan) => scan(),
  };
}

/** The item of a line that is no address: InvalidIpError's status and message, without the error. */
function invalidItem(input: string, reason: string): FailedItem {
  return failedItem(input, "invalid_ip", invalidIpMessage(input, reason));
}

/**
 * The item of an address no source knows: NotFoundError's message, written
 * here without making the error (tests/service/bulk/lookup_item_test.ts holds the two equal).
 */
function notFoundItem(input: string, ip: ParsedIp): FailedItem {
  const range = reservedRangeName(ip);
  const base = `No data for IP address ${quoteInput(ip.address)}`;
  return failedItem(input, "not_found", range ? `${base}: it is in a ${range} range` : base);
}

/** A selection naming `risk`: a claim is read even with no crawler list installed. */
const RISK_SELECTION = Object.freeze({ risk: true });

const NO_SIGNALS: RiskSignals = Object.freeze({
  tor: null,
  vpn: null,
  blocklisted: null,
  hosting: null,
});

/**
 * Maps a requested `lang` onto one of `languages` (the City database's). The value must be
 * a language tag (BCP 47, as `Intl.getCanonicalLocales` reads it: `de`, `pt-BR`,
 * `zh-Hant-TW`; not `en-`, `de_AT` or an Accept-Language list). Case-insensitively, the
 * exact tag, else the first language with the same primary subtag (`de-DE` → `de`,
 * `zh` or `zh-TW` → `zh-CN`, `pt` → `pt-BR`). Anything else is a BadRequestError naming
 * the value (capped). Resolutions are remembered (bounded).
 */
export function createLanguageResolver(
  languages: readonly string[],
): (lang: string | null | undefined) => string {
  const exact = new Map(languages.map((l) => [l.toLowerCase(), l]));
  const byPrimary = new Map<string, string>();
  for (const l of languages) {
    const primary = l.toLowerCase().split("-")[0]!;
    if (!byPrimary.has(primary)) byPrimary.set(primary, l);
  }
  const resolve = (lang: string): string => {
    let tag: string;
    try {
      tag = Intl.getCanonicalLocales(lang)[0]!.toLowerCase();
    } catch {
      throw new BadRequestError(
        `Invalid lang ${quoteInput(lang)}: expected one language tag such as de or pt-BR`,
      );
    }
    const found = exact.get(tag) ?? byPrimary.get(tag.split("-")[0]!);
    if (found === undefined) {
      throw new BadRequestError(
        `Unsupported lang ${quoteInput(lang)}: the City database carries ${languages.join(", ")}`,
      );
    }
    return found;
  };
  const resolved = new Map<string, string>();
  return (lang) => {
    if (!lang) return "en";
    let found = resolved.get(lang);
    if (found === undefined) {
      found = resolve(lang);
      if (resolved.size >= RESOLVED_LIMIT) resolved.clear();
      resolved.set(lang, found);
    }
    return found;
  };
}

/** The front tables (places, connections by record offset) hold 2^16 answers each. */
const FRONT_BITS = 16;

/** Bound of the shared flag and currency parts kept per country and language. */
const COUNTRY_PARTS_LIMIT = 4096;

/** Bound of the remembered `lang` resolutions (cleared when full). */
const RESOLVED_LIMIT = 256;

/** The `timezone` of an answer whose selection leaves it out (never shown). */
const NO_TIMEZONE: TimeZoneInfo = sharedPart(noTimeZone());

const NO_GEOLOCATION: GeoLocation = sharedPart(toGeoLocation(null, "en", null));
