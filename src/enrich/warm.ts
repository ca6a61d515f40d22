/** Shared enrichment caches, filled at start-up so no request pays ICU's set-up cost. */

import { countryCodes } from "./country.ts";
import { type CountryEnricher, createCountryEnricher } from "./enricher.ts";
import { createTimeZoneCache, type TimeZoneLookup } from "./timezone.ts";

/** The caches the lookup core enriches with. */
export interface Enrichment {
  countries: CountryEnricher;
  timeZones: TimeZoneLookup;
}

/**
 * Creates the caches and, with `warm`, fills them for every country and every
 * time zone ICU knows: the first answer for a zone builds up to a dozen
 * `Intl.DateTimeFormat` objects (about 0.4 ms), which belongs in start-up, not
 * in a request. Takes a few hundred milliseconds.
 */
export function createEnrichment(options: { warm: boolean; now?: Date } = { warm: false }) {
  const enrichment: Enrichment = {
    countries: createCountryEnricher(),
    timeZones: createTimeZoneCache(),
  };
  if (options.warm) {
    const now = options.now ?? new Date();
    for (const code of countryCodes()) enrichment.countries(code);
    for (const zone of Intl.supportedValuesOf("timeZone")) enrichment.timeZones(zone, now);
  }
  return enrichment;
}
