/**
 * Static facts about a country from the `countries-list` data set.
 *
 * @module
 */

import { continents, countries, type ICountry } from "countries-list";

/** What `countries-list` tells us about one country, normalised for the API. */
export interface CountryFacts {
  /** Capital in English; null where the data set has none (AQ, BV, HM, MO, UM). */
  capital: string | null;
  /** First calling code with a plus, e.g. "+1"; null when the country has none. */
  dial_code: string | null;
  /** First ISO 4217 code listed for the country (its main one), e.g. "USD". */
  currencyCode: string | null;
  /** Continent code as GeoNames and MaxMind spell them (AF, AN, AS, EU, NA, OC, SA). */
  continentCode: string | null;
  /** The continent's English name, e.g. "Oceania". */
  continent: string | null;
  /** The country's time zone when ICU lists exactly one for it (FR, JP), else null (US, DE). */
  timeZone: string | null;
}

/** Exactly two upper-case ASCII letters: the shape of every key of the data set. */
const COUNTRY_CODE = /^[A-Z]{2}$/;

/**
 * Facts for an ISO 3166-1 alpha-2 code (upper case, e.g. "US").
 *
 * Returns null for anything the data set does not hold (including lower-case
 * spellings). An empty capital in the data becomes null. `phone` in the data is an
 * array of numbers (several for e.g. DO: 1809, 1829, 1849; XK: 377, …), so the
 * first is taken; `currency` is an array whose first entry is the main currency
 * (US: USD before USN; CH: CHF before CHE/CHW).
 */
export function countryFacts(countryCode: string): CountryFacts | null {
  if (!COUNTRY_CODE.test(countryCode)) return null;
  // Own-property check: the table is a plain object, so never trust `in`.
  if (!Object.hasOwn(countries, countryCode)) return null;
  const country = (countries as Record<string, ICountry | undefined>)[countryCode];
  if (country === undefined) return null;
  const phone = country.phone[0];
  const currency = country.currency[0];
  const continentCode = country.continent ?? null;
  return {
    capital: country.capital === "" ? null : country.capital,
    dial_code: phone === undefined ? null : `+${phone}`,
    currencyCode: currency ?? null,
    continentCode,
    continent: continentCode === null ? null : continents[continentCode] ?? null,
    timeZone: soleTimeZone(countryCode),
  };
}

/** The one zone ICU lists for region `countryCode`, or null when it lists none or several. */
function soleTimeZone(countryCode: string): string | null {
  const zones = new Intl.Locale(`und-${countryCode}`).getTimeZones?.();
  return zones?.length === 1 ? zones[0]! : null;
}

/** Every country code the data set holds (for warming caches at start-up). */
export function countryCodes(): string[] {
  return Object.keys(countries);
}
