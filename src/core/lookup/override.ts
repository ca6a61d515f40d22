/**
 * The operator's own locations (`location` lists, RFC 8805 geofeeds): for an
 * address inside one of its prefixes, the geofeed's country, region, city and
 * postal code replace the City database's, private ranges included.
 *
 * The answer is a City record built from the geofeed entry, so the rest of
 * the lookup (names, country facts, flag, currency, time zone) is unchanged.
 * Names come from the City database where it agrees (same country, same
 * subdivision), else from ICU (`Intl.DisplayNames`); coordinates and the
 * time zone are kept only where the database places the address in the same
 * country and region (a different place's coordinates would mislead), else
 * the country's sole time zone stands (as for any record without one).
 */

import type { FeedMatch } from "../../data/risk/security.ts";
import type { CityRecord, Names } from "../../data/mmdb/records.ts";

/** EU member states (ISO 3166-1 alpha-2), for `is_in_eu` of a country the database does not give. */
const EU = new Set(
  "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split(" "),
);

/** Builds City records from geofeed entries; one per entry and database record (cached). */
export function createOverride(languages: readonly string[]) {
  const countryNames = new Map<string, Names>();
  const namesOf = (code: string): Names => {
    let names = countryNames.get(code);
    if (!names) {
      names = {};
      for (const lang of new Set(["en", ...languages])) {
        try {
          const name = new Intl.DisplayNames([lang], { type: "region", fallback: "none" }).of(code);
          if (name) names[lang] = name;
        } catch {
          // A language ICU does not know: English stands in.
        }
      }
      countryNames.set(code, names);
    }
    return names;
  };
  const NONE = {} as CityRecord;
  const made = new WeakMap<FeedMatch, WeakMap<CityRecord, CityRecord>>();

  return (entry: FeedMatch, base: CityRecord | null): CityRecord => {
    let byBase = made.get(entry);
    if (!byBase) made.set(entry, byBase = new WeakMap());
    let record = byBase.get(base ?? NONE);
    if (!record) {
      record = Object.freeze(build(entry, base, namesOf));
      byBase.set(base ?? NONE, record);
    }
    return record;
  };
}

function build(
  entry: FeedMatch,
  base: CityRecord | null,
  namesOf: (code: string) => Names,
): CityRecord {
  const code = entry.country;
  const baseCountry = base?.country;
  const sameCountry = code !== undefined && baseCountry?.iso_code === code;
  const subdivision = entry.region?.slice(entry.region.indexOf("-") + 1);
  const baseSubdivision = base?.subdivisions?.[0];
  const sameRegion = sameCountry && subdivision !== undefined &&
    baseSubdivision?.iso_code === subdivision;
  const record: CityRecord = {};
  if (code !== undefined) {
    record.country = sameCountry
      ? baseCountry
      : { iso_code: code, names: namesOf(code), is_in_european_union: EU.has(code) };
    if (sameCountry && base?.continent) record.continent = base.continent;
  }
  if (subdivision !== undefined) {
    record.subdivisions = [
      sameRegion ? baseSubdivision! : { iso_code: subdivision },
    ];
  }
  if (entry.city !== undefined) record.city = { names: { en: entry.city } };
  if (entry.postal !== undefined) record.postal = { code: entry.postal };
  if (sameRegion && base?.location) record.location = base.location;
  return record;
}
