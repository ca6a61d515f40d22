/** Shared enrichment caches, filled at start-up so no request pays ICU's set-up cost. */

import { countryCodes } from "./country.ts";
import { type CountryEnricher, createCountryEnricher } from "./country_facts.ts";
import { createTimeZoneCache, type TimeZoneLookup } from "./timezone.ts";

/** The caches the lookup core enriches with. */
export interface Enrichment {
  countries: CountryEnricher;
  timeZones: TimeZoneLookup;
}

/**
 * Creates the caches and, with `warm`, fills them for every country and every
 * time zone ICU knows: a country's first answer builds its currency formatters,
 * a set-up that belongs in start-up, not in a request (zones within the zone
 * table's years cost no ICU work).
 */
export function createEnrichment(options: { warm: boolean; now?: Date } = { warm: false }) {
  const enrichment: Enrichment = {
    countries: createCountryEnricher(),
    timeZones: createTimeZoneCache(),
  };
  if (options.warm) {
    for (const step of warmUpSteps(enrichment, options.now ?? new Date())) step();
  }
  return enrichment;
}

/**
 * Warms `enrichment` a few countries or zones at a time, yielding to the event
 * loop between slices of about `sliceMs`, so a server can answer while it
 * warms (an entry not warmed yet is computed on first use, as it would be
 * anyway). Resolves when every country and zone is warm.
 */
export async function warmInBackground(enrichment: Enrichment, sliceMs = 5): Promise<void> {
  const steps = warmUpSteps(enrichment, new Date());
  let i = 0;
  while (i < steps.length) {
    const until = performance.now() + sliceMs;
    while (i < steps.length && performance.now() < until) steps[i++]!();
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** One step per country and per time zone ICU knows. */
function warmUpSteps(enrichment: Enrichment, now: Date): (() => void)[] {
  return [
    ...countryCodes().map((code) => () => void enrichment.countries(code)),
    ...Intl.supportedValuesOf("timeZone").map((zone) => () => void enrichment.timeZones(zone, now)),
  ];
}
