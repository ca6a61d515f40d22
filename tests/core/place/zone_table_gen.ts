/**
 * Writes src/core/place/zone_table.json: for every time zone ICU lists or the
 * City database names, its segments from 2025 to 2030 (start, offset,
 * is_dst, abbreviation), as ICU gives them (see zoneTable in timezone.ts).
 *
 * Why a table: asking ICU costs each isolate about 35 MB of locale data and
 * 0.1 ms or more per zone on first use (eleven locales are searched for an
 * abbreviation); with one isolate per CPU that was most of the server's
 * memory. A test holds the table equal to ICU (and another holds the answers
 * equal to Python's zoneinfo), so a Deno upgrade whose ICU disagrees fails
 * it; then regenerate:
 *
 *   deno task zones
 *
 * It lives in tests/, beside the tests that hold the table equal to ICU and
 * use its helpers: it is a snapshot refresher, not part of the server (src/).
 *
 * @module
 */

import { DEFAULT_DATA_DIR } from "../../../src/base/config.ts";
import { zoneTable } from "../../../src/core/place/timezone.ts";

/** The years the table covers; instants outside them are answered by ICU. */
export const TABLE_FROM = Date.UTC(2025, 0, 1);
export const TABLE_TO = Date.UTC(2031, 0, 1);

/**
 * The `time_zone` strings of a GeoLite2-City file. MMDB strings shorter than 29 bytes
 * are stored as one control byte 0x40 + length, then the text; longer ones as 0x5d
 * and (length - 29). Every zone id appears at least once in the data section.
 */
export function zonesInCityDatabase(bytes: Uint8Array): Set<string> {
  const text = new TextDecoder("latin1").decode(bytes);
  const zones = new Set<string>();
  const candidate =
    /(?:Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)\/[A-Za-z_+\-]+(?:\/[A-Za-z_+\-]+)*/g;
  for (const match of text.matchAll(candidate)) {
    const at = match.index;
    for (let end = match[0].length; end > 0; end--) {
      const length = end;
      const control = length < 29
        ? bytes[at - 1] === (0x40 | length)
        : bytes[at - 2] === 0x5d && bytes[at - 1] === length - 29;
      if (control) {
        zones.add(match[0].slice(0, end));
        break;
      }
    }
  }
  return zones;
}

/** The zones the table holds: ICU's list and the City database's ids (some are aliases). */
export async function tableZones(dataDir = DEFAULT_DATA_DIR()): Promise<string[]> {
  const manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
  const cityFile = manifest.sources.find((e: { kind: string }) => e.kind === "city").file;
  const city = zonesInCityDatabase(await Deno.readFile(`${dataDir}/${cityFile}`));
  return [...new Set([...Intl.supportedValuesOf("timeZone"), ...city])].sort();
}

if (import.meta.main) {
  const table = zoneTable(await tableZones(), TABLE_FROM, TABLE_TO);
  const path = new URL("../../../src/core/place/zone_table.json", import.meta.url);
  await Deno.writeTextFile(path, JSON.stringify(table) + "\n");
  console.error(`wrote ${Object.keys(table.zones).length} zones to ${path.pathname}`);
}
