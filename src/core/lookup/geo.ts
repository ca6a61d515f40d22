/** Projects a City record onto our `geoLocation` shape (names in one language). */

import type { CityRecord, Names } from "../../data/mmdb/records.ts";
import type { GeoLocation } from "../../base/types.ts";

/** Country facts that come from the country table, not the database. */
export interface CountryExtras {
  capital: string | null;
  dial_code: string | null;
  /** Used when the record has no continent (an address known only by its registered country). */
  continent: string | null;
  continentCode: string | null;
}

/** The country the record locates, falling back to where the block is registered. */
export function effectiveCountry(record: CityRecord | null) {
  return record?.country ?? record?.registered_country ?? null;
}

/** Builds `geoLocation`; every key present, `null` when unknown, `is_in_eu` never null. */
export function toGeoLocation(
  record: CityRecord | null,
  lang: string,
  extras: CountryExtras | null,
): GeoLocation {
  const country = effectiveCountry(record);
  const subdivision = record?.subdivisions?.[0];
  const continent = record?.continent;
  return {
    continent: continent ? pickName(continent.names, lang) : extras?.continent ?? null,
    continentCode: continent ? continent.code ?? null : extras?.continentCode ?? null,
    country: pickName(country?.names, lang),
    countryCode: country?.iso_code ?? null,
    capital: extras?.capital ?? null,
    region: pickName(subdivision?.names, lang),
    regionCode: subdivision?.iso_code ?? null,
    city: pickName(record?.city?.names, lang),
    postal_Code: record?.postal?.code ?? null,
    dial_code: extras?.dial_code ?? null,
    // MaxMind omits the flag when false.
    is_in_eu: country?.is_in_european_union === true,
    latitude: record?.location?.latitude ?? null,
    longitude: record?.location?.longitude ?? null,
    accuracy_radius: record?.location?.accuracy_radius ?? null,
  };
}

/** The name in `lang`, else English, else null. */
function pickName(names: Names | undefined, lang: string): string | null {
  if (!names) return null;
  return names[lang] ?? names.en ?? null;
}
