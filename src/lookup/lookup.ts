/** The lookup core: one address in, the full `data` object out. No HTTP, no KV, no formatting. */

import { createEnrichment, type Enrichment } from "../enrich/warm.ts";
import { BadRequestError, NotFoundError, quoteInput } from "../errors.ts";
import { type ParsedIp, parseIp } from "../ip/parse.ts";
import { reservedRangeName } from "../ip/reserved.ts";
import { assessSecurity, NO_FEEDS, type RiskSource } from "../risk/security.ts";
import type { DataSet } from "../sources/data_set.ts";
import type { AsnRecord, CityRecord } from "../sources/records.ts";
import type { Connection, Currency, Flag, GeoLocation, LookupResult, UserAgent } from "../types.ts";
import { effectiveCountry, toGeoLocation } from "./geo.ts";

export interface LookupDeps {
  data: DataSet;
  /** The clock; tests pass a fixed one. */
  now: () => Date;
  parseUserAgent: (ua: string | null | undefined) => UserAgent;
  risk?: RiskSource;
  /** Country and time-zone caches; share warmed ones across lookups (see createEnrichment). */
  enrichment?: Enrichment;
}

export interface LookupOptions {
  /** The user-agent string to parse; attached per call, never cached with the address. */
  userAgent?: string | null;
  /** A language the City database carries; names fall back to English. */
  lang?: string | null;
}

/** What one City record yields, computed once per record and language. */
interface PlaceFacts {
  geoLocation: GeoLocation;
  timeZone: string | null;
  flag: Flag;
  currency: Currency;
}

/** Looks up an address given as text; throws InvalidIpError, NotFoundError or BadRequestError (lang). */
export type Lookup = (ipText: string, options?: LookupOptions) => LookupResult;

const EMPTY_FLAG: Flag = Object.freeze({ flag_Icon: null, flag_unicode: null });
const EMPTY_CURRENCY: Currency = Object.freeze({
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
  const risk = deps.risk ?? NO_FEEDS;
  const { countries: countryFacts, timeZones: timeZoneInfo } = deps.enrichment ??
    createEnrichment();
  const languages = data.city?.metadata.languages.length ? data.city.metadata.languages : ["en"];
  const languageByLowerCase = new Map(languages.map((l) => [l.toLowerCase(), l]));
  // Keyed by the decoded record object, which the reader's offset cache shares:
  // entries live exactly as long as the cached record does.
  const places = new WeakMap<CityRecord, Map<string, PlaceFacts>>();
  const connections = new WeakMap<AsnRecord, Connection>();

  const placeOf = (record: CityRecord, lang: string): PlaceFacts => {
    let byLang = places.get(record);
    if (!byLang) places.set(record, byLang = new Map());
    let place = byLang.get(lang);
    if (!place) {
      const facts = countryFacts(effectiveCountry(record)?.iso_code ?? null);
      place = Object.freeze({
        geoLocation: Object.freeze(toGeoLocation(record, lang, facts)),
        timeZone: record.location?.time_zone ?? null,
        flag: Object.freeze(facts.flag),
        currency: Object.freeze(facts.currency),
      });
      byLang.set(lang, place);
    }
    return place;
  };

  const connectionOf = (record: AsnRecord | null): Connection => {
    if (!record) return NO_CONNECTION;
    let connection = connections.get(record);
    if (!connection) {
      const org = record.autonomous_system_organization ?? null;
      // Without an ISP database, isp and org fall back to the AS organisation.
      connection = Object.freeze({
        asn_number: record.autonomous_system_number ?? null,
        asn_org: org,
        isp: org,
        org,
        domain: null,
        connection_type: null,
      });
      connections.set(record, connection);
    }
    return connection;
  };

  const resolveLang = (lang: string | null | undefined): string => {
    if (!lang) return "en";
    const found = languageByLowerCase.get(lang.toLowerCase());
    if (!found) {
      throw new BadRequestError(
        `Unsupported lang ${quoteInput(lang)}: the City database carries ${languages.join(", ")}`,
      );
    }
    return found;
  };

  const lookupParsed = (ip: ParsedIp, options: LookupOptions): LookupResult => {
    const lang = resolveLang(options.lang);
    const cityRecord = data.city?.getBytes(ip.bytes) ?? null;
    const asnRecord = data.asn?.getBytes(ip.bytes) ?? null;
    if (!cityRecord && !asnRecord) throw new NotFoundError(ip.address, reservedRangeName(ip));
    const place = cityRecord ? placeOf(cityRecord, lang) : null;
    return {
      ip: ip.address,
      geoLocation: place?.geoLocation ?? NO_GEOLOCATION,
      timezone: timeZoneInfo(place?.timeZone ?? null, now()),
      flag: place?.flag ?? EMPTY_FLAG,
      currency: place?.currency ?? EMPTY_CURRENCY,
      connection: connectionOf(asnRecord),
      userAgent: parseUserAgent(options.userAgent),
      security: assessSecurity(risk, ip),
    };
  };

  return (ipText, options = {}) => lookupParsed(parseIp(ipText), options);
}

const NO_GEOLOCATION: GeoLocation = Object.freeze(toGeoLocation(null, "en", null));
const NO_CONNECTION: Connection = Object.freeze({
  asn_number: null,
  asn_org: null,
  isp: null,
  org: null,
  domain: null,
  connection_type: null,
});
