/**
 * Enrichment of a lookup result: country facts, currency, flag, time zone.
 * Pure functions and factories; nothing is computed at import time.
 *
 * @module
 */

export { type CountryFacts, countryFacts } from "./country.ts";
export { currencyInfo, hexUnicode } from "./currency.ts";
export { type CountryEnricher, type CountryEnrichment, createCountryEnricher } from "./enricher.ts";
export { flagFor } from "./flag.ts";
export {
  createTimeZoneCache,
  formatOffset,
  MAX_CACHED_ZONES,
  timeZoneInfo,
  type TimeZoneLookup,
} from "./timezone.ts";
