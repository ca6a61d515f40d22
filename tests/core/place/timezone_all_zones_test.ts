/**
 * `is_dst` and the offset of every time zone the City database names (and every zone
 * ICU lists), at dates across 2020–2031, against Python's zoneinfo (system tzdata).
 *
 * The rule checked (docs/decisions.md, "Time zones"): DST is tzdata's positive DST
 * only, `dst() > 0`; tzdata's negative DST (Irish winter GMT, Morocco's Ramadan
 * hour) counts as standard time.
 */

import assert from "node:assert/strict";
import { createTimeZoneCache } from "../../../src/core/place/timezone.ts";
import { zonesInCityDatabase } from "./zone_table_gen.ts";
import { defaultDataFile } from "../../_helpers.ts";
import { askZoneinfo } from "./zoneinfo_oracle.ts";
import { ignoredName } from "../../_skip.ts";

const cityZones = zonesInCityDatabase(
  await Deno.readFile(defaultDataFile("city")),
);
const ZONES = [...new Set([...cityZones, ...Intl.supportedValuesOf("timeZone")])].sort();

/** Four dates a year, 2020–2031, plus instants where a simpler rule went wrong. */
const DATES: string[] = [];
for (let year = 2020; year <= 2031; year++) {
  for (const monthDay of ["01-15", "04-15", "07-15", "10-15"]) {
    DATES.push(`${year}-${monthDay}T12:00:00Z`);
  }
}
DATES.push(
  "2020-11-15T12:00:00Z", // Whitehorse: -07 kept as standard time after 1 November 2020
  "2026-02-25T12:00:00Z", // Casablanca: Ramadan at +00 (negative DST)
  "2030-01-15T12:00:00Z", // Casablanca: Ramadan over New Year
  "2031-06-01T12:00:00Z", // Casablanca: +01 in a year that began in Ramadan
);

const pairs = ZONES.flatMap((zone) =>
  DATES.map((iso) => [zone, Math.floor(Date.parse(iso) / 1000)] as const)
);
const oracle = await askZoneinfo(pairs);
const skipped = "skipped" in oracle ? oracle.skipped : null;

Deno.test("the City database names time zones, and ICU knows every one of them", () => {
  assert.ok(cityZones.size > 300, `only ${cityZones.size} zones found`);
  for (const zone of cityZones) {
    assert.doesNotThrow(() => new Intl.DateTimeFormat("en", { timeZone: zone }), zone);
  }
});

Deno.test({
  name: ignoredName(
    "is_dst and offset match zoneinfo for every zone at 52 dates in 2020-2031",
    skipped,
  ),
  ignore: skipped !== null,
  fn() {
    assert.ok(!("skipped" in oracle), "the zoneinfo oracle ran (the test is ignored otherwise)");
    const timeZones = createTimeZoneCache();
    const wrong: string[] = [];
    pairs.forEach(([zone, epoch], i) => {
      const answer = oracle.answers[i]!;
      const ours = timeZones(zone, new Date(epoch * 1000));
      const expected = { offset: answer.offset, is_dst: answer.dst > 0 };
      if (ours.offset !== expected.offset || ours.is_dst !== expected.is_dst) {
        wrong.push(
          `${zone} at ${new Date(epoch * 1000).toISOString()}: offset ${ours.offset}, ` +
            `is_dst ${ours.is_dst}; zoneinfo ${expected.offset}, ${expected.is_dst}`,
        );
      }
    });
    assert.deepEqual(wrong, [], `${wrong.length} of ${pairs.length} answers differ`);
  },
});

/** The cases the issue names, pinned, so a reader sees the rule at work. */
const NAMED: Array<{ zone: string; at: string; offset: number; isDst: boolean }> = [
  { zone: "America/Whitehorse", at: "2020-07-15T12:00:00Z", offset: -25200, isDst: true },
  { zone: "America/Whitehorse", at: "2020-11-15T12:00:00Z", offset: -25200, isDst: false },
  { zone: "Africa/Casablanca", at: "2026-02-25T12:00:00Z", offset: 0, isDst: false },
  { zone: "Africa/Casablanca", at: "2031-06-01T12:00:00Z", offset: 3600, isDst: false },
  { zone: "Europe/Dublin", at: "2026-01-15T12:00:00Z", offset: 0, isDst: false },
  { zone: "Europe/Dublin", at: "2026-07-15T12:00:00Z", offset: 3600, isDst: false },
  { zone: "Antarctica/Troll", at: "2026-07-15T12:00:00Z", offset: 7200, isDst: true },
  { zone: "Asia/Amman", at: "2026-07-15T12:00:00Z", offset: 10800, isDst: false },
];

for (const { zone, at, offset, isDst } of NAMED) {
  Deno.test(`${zone} at ${at} is at ${offset} s, is_dst ${isDst}`, () => {
    const info = createTimeZoneCache()(zone, new Date(at));
    assert.deepEqual({ offset: info.offset, is_dst: info.is_dst }, { offset, is_dst: isDst });
  });
}
