/** The lookup core: one address in, the full `data` object out. No HTTP, no KV, no formatting. */

import { createEnrichment, type Enrichment } from "../enrich/warm.ts";
import { BadRequestError, NotFoundError, quoteInput } from "../errors.ts";
import { type ParsedIp, parseIp } from "../ip/parse.ts";
import { reservedRangeName } from "../ip/reserved.ts";
import { formatNetwork } from "../ip/cidr.ts";
import { type RiskSignals, type RiskSource, securityOf } from "../risk/security.ts";
import type { DataSet } from "../sources/data_set.ts";
import type { CityRecord } from "../mmdb/records.ts";
import type { Currency, Flag, GeoLocation, LookupResult, UserAgent } from "../types.ts";
import { createConnectionOf, NO_CONNECTION } from "./connection.ts";
import { effectiveCountry, toGeoLocation } from "./geo.ts";
import { createOverride } from "./override.ts";
import { createMatchedNetworks } from "./matched_networks.ts";
import { sharedPart } from "../shared_part.ts";

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
  /** The user-agent string to parse; attached per call, never cached with the address. */
  userAgent?: string | null;
  /**
   * A language the City database carries, or a tag that falls back to one (`de-DE` → `de`,
   * `zh` → `zh-CN`, `pt` → `pt-BR`); names it lacks fall back to English.
   */
  lang?: string | null;
  /** The `get` selection: the opt-in `risk` and `network` are computed only when it names them. */
  selection?: { readonly risk: boolean; readonly network?: boolean } | null;
}

/** What one City record yields, computed once per record and language. */
interface PlaceFacts {
  geoLocation: GeoLocation;
  timeZone: string | null;
  flag: Flag;
  currency: Currency;
}

/** Looks up an address given as text; throws InvalidIpError, NotFoundError or BadRequestError (lang). */
export interface Lookup {
  (ipText: string, options?: LookupOptions): LookupResult;
  /**
   * The same lookup, with what the result was made from: what the compatible
   * APIs (src/compat) render in their own shapes. Throws as the lookup does.
   */
  detail(ipText: string, options?: LookupOptions): LookupDetail;
}

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

/**
 * Creates the lookup function over a data set. Derived facts are cached:
 * decoded records by data offset (in the reader), places per decoded record
 * and language, connections per ASN record, country facts per country, time
 * zone facts per zone and minute.
 */
export function createLookup(deps: LookupDeps): Lookup {
  const { data, now, parseUserAgent } = deps;
  const risk = deps.risk ?? data.risk;
  const connectionOf = createConnectionOf(data);
  const { countries: countryFacts, timeZones: timeZoneInfo } = deps.enrichment ??
    createEnrichment();
  const languages = data.city?.metadata.languages.length ? data.city.metadata.languages : ["en"];
  const resolveLang = createLanguageResolver(languages);
  // Keyed by the decoded record object, which the reader's offset cache shares:
  // entries live exactly as long as the cached record does.
  const places = new WeakMap<CityRecord, Map<string, PlaceFacts>>();
  const overridden = data.location ? createOverride(languages) : null;
  const matchedNetworks = createMatchedNetworks(data, risk);

  const placeOf = (record: CityRecord, lang: string): PlaceFacts => {
    let byLang = places.get(record);
    if (!byLang) places.set(record, byLang = new Map());
    let place = byLang.get(lang);
    if (!place) {
      const facts = countryFacts(effectiveCountry(record)?.iso_code ?? null, lang);
      place = Object.freeze({
        geoLocation: sharedPart(toGeoLocation(record, lang, facts)),
        // A record without a zone (1.1.1.1: registered country only) takes the country's sole zone.
        timeZone: record.location?.time_zone ?? facts.timeZone,
        flag: sharedPart(facts.flag),
        currency: sharedPart(facts.currency),
      });
      byLang.set(lang, place);
    }
    return place;
  };

  const lookupParsed = (ip: ParsedIp, options: LookupOptions, seen?: Seen): LookupResult => {
    const lang = resolveLang(options.lang);
    let cityRecord = data.city?.getBytes(ip.bytes) ?? null;
    // The operator's geofeed, most specific entry first, wins over the City database.
    const own = data.location?.matches(ip, null)[0];
    if (own) cityRecord = overridden!(own, cityRecord);
    const connection = connectionOf(ip);
    // Security feeds alone do not make an address found (FireHOL lists every bogon);
    // the operator's geofeed does.
    if (!cityRecord && connection === NO_CONNECTION) {
      throw new NotFoundError(ip.address, reservedRangeName(ip));
    }
    const place = cityRecord ? placeOf(cityRecord, lang) : null;
    const signals = risk.signals(ip, connection.asn_number);
    if (seen) {
      seen.city = cityRecord;
      seen.signals = signals;
    }
    const result: LookupResult = {
      ip: ip.address,
      geoLocation: place?.geoLocation ?? NO_GEOLOCATION,
      timezone: timeZoneInfo(place?.timeZone ?? null, now()),
      flag: place?.flag ?? EMPTY_FLAG,
      currency: place?.currency ?? EMPTY_CURRENCY,
      connection,
      userAgent: parseUserAgent(options.userAgent),
      security: securityOf(signals),
    };
    if (options.selection?.risk) result.risk = risk.explain(ip, connection.asn_number);
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

  const lookup: Lookup = (ipText, options = {}) => lookupParsed(parseIp(ipText), options);
  lookup.detail = (ipText, options = {}) => {
    const ip = parseIp(ipText);
    const seen: Seen = { city: null, signals: NO_SIGNALS };
    const result = lookupParsed(ip, options, seen);
    return { result, city: seen.city, network: networkOf(ip), signals: seen.signals };
  };
  return lookup;
}

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

/** Bound of the remembered `lang` resolutions (cleared when full). */
const RESOLVED_LIMIT = 256;

const NO_GEOLOCATION: GeoLocation = sharedPart(toGeoLocation(null, "en", null));
