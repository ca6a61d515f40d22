/**
 * Writes src/enrich/zone_abbreviations.json: each ICU time zone's
 * abbreviation for each offset it uses from 2024 to 2030, as abbrAt finds
 * it (up to eleven English locales asked). Searching that at run time costs
 * each isolate about 80 MB of ICU locale data; the table costs 20 KB. A test
 * holds the table equal to ICU's answers, so a Deno (ICU) upgrade that
 * changes a name fails it: then run
 *
 *   deno run --allow-write src/enrich/zone_abbreviations_gen.ts && deno fmt src/enrich
 *
 * @module
 */

import { zoneAbbreviationTable } from "./timezone.ts";

if (import.meta.main) {
  const table = zoneAbbreviationTable(Intl.supportedValuesOf("timeZone"));
  const path = new URL("./zone_abbreviations.json", import.meta.url);
  await Deno.writeTextFile(path, JSON.stringify(table, null, 0) + "\n");
  console.error(`wrote ${Object.keys(table).length} zones to ${path.pathname}`);
}
