import assert from "node:assert/strict";
import {
  createTimeZoneCache,
  MAX_CACHED_ZONES,
  timeZoneInfo,
  zoneTable,
} from "../../../src/core/place/timezone.ts";
import { TABLE_FROM, TABLE_TO, tableZones } from "./zone_table_gen.ts";

/** Instants (fixed clock) walking across minute boundaries and DST changes. */
const SEQUENCES: Array<{ name: string; zone: string; instants: string[] }> = [
  {
    name: "a minute boundary without a transition",
    zone: "Asia/Kolkata",
    instants: [
      "2026-05-01T12:00:58.000Z",
      "2026-05-01T12:00:59.999Z",
      "2026-05-01T12:01:00.000Z",
      "2026-05-01T12:01:30.500Z",
      "2026-05-01T12:02:00.000Z",
    ],
  },
  {
    name: "New York spring forward (minute and DST boundary at once)",
    zone: "America/New_York",
    instants: [
      "2026-03-08T06:59:00.000Z",
      "2026-03-08T06:59:59.999Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-08T07:00:01.000Z",
    ],
  },
  {
    name: "Berlin fall back",
    zone: "Europe/Berlin",
    instants: ["2026-10-25T00:59:59.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T01:00:59.000Z"],
  },
  {
    name: "Lord Howe half-hour spring forward",
    zone: "Australia/Lord_Howe",
    instants: ["2026-10-03T15:29:59.000Z", "2026-10-03T15:30:00.000Z"],
  },
  {
    name: "a year boundary",
    zone: "Australia/Sydney",
    instants: ["2026-12-31T23:59:59.000Z", "2027-01-01T00:00:00.000Z"],
  },
];

for (const { name, zone, instants } of SEQUENCES) {
  for (const order of ["forward", "backward"] as const) {
    Deno.test(`cache equals timeZoneInfo across ${name}, ${zone}, ${order} in time`, () => {
      const cached = createTimeZoneCache();
      const walk = order === "forward" ? instants : [...instants].reverse();
      for (const iso of walk) {
        const now = new Date(iso);
        // Asked twice: the cold answer and the warm one must both match.
        assert.deepEqual(cached(zone, now), timeZoneInfo(zone, now), `cold at ${iso}`);
        assert.deepEqual(cached(zone, now), timeZoneInfo(zone, now), `warm at ${iso}`);
      }
    });
  }
}

Deno.test("cache serves many zones interleaved with the same answers as timeZoneInfo", () => {
  const cached = createTimeZoneCache();
  const zones = ["UTC", "Europe/London", "Asia/Kathmandu", "Pacific/Chatham", "America/Santiago"];
  for (const iso of ["2026-01-15T12:00:00Z", "2026-01-15T12:00:30Z", "2026-07-15T12:00:00Z"]) {
    for (const zone of zones) {
      assert.deepEqual(cached(zone, new Date(iso)), timeZoneInfo(zone, new Date(iso)));
    }
  }
});

Deno.test("cache: a zone of the table needs no Intl formatter within its years; past them ICU answers", () => {
  const cached = createTimeZoneCache();
  cached("Europe/Berlin", new Date("2026-07-15T12:00:05Z")); // cold: fills the entry
  const OriginalDTF = Intl.DateTimeFormat;
  const originalFormatToParts = OriginalDTF.prototype.formatToParts;
  let calls = 0;
  // Count constructions (the module reads the global at call time) and formatting.
  Intl.DateTimeFormat = new Proxy(OriginalDTF, {
    construct(target, args) {
      calls++;
      return Reflect.construct(target, args);
    },
  });
  OriginalDTF.prototype.formatToParts = function (this: Intl.DateTimeFormat, date) {
    calls++;
    return originalFormatToParts.call(this, date);
  };
  try {
    const warm = cached("Europe/Berlin", new Date("2026-07-15T12:00:59.999Z"));
    assert.equal(calls, 0);
    assert.equal(warm.current_time, "2026-07-15T14:00:59+02:00");
    // Next minute: recomputed from the zone table, still without ICU.
    assert.equal(cached("Europe/Berlin", new Date("2026-10-25T01:00:00Z")).abbr, "CET");
    assert.equal(calls, 0);
    // Past the table's years ICU answers (the counters see it).
    assert.equal(cached("Europe/Berlin", new Date("2035-07-15T12:00:00Z")).abbr, "CEST");
    assert.ok(calls > 0, "the counters see the ICU path");
  } finally {
    Intl.DateTimeFormat = OriginalDTF;
    OriginalDTF.prototype.formatToParts = originalFormatToParts;
  }
});

Deno.test("cache shares frozen answers: no caller can change the next caller's answer", () => {
  const cached = createTimeZoneCache();
  const now = new Date("2026-01-15T12:00:00Z");
  const first = cached("America/New_York", now);
  assert.throws(() => {
    first.abbr = "mutated";
  }, TypeError);
  assert.deepEqual(cached("America/New_York", now), timeZoneInfo("America/New_York", now));
  // A new second gives a new answer (current_time moves on).
  const later = cached("America/New_York", new Date("2026-01-15T12:00:01Z"));
  assert.equal(later.current_time, "2026-01-15T07:00:01-05:00");
});

Deno.test("cache gives all nulls for null, unknown zones and invalid dates", () => {
  const cached = createTimeZoneCache();
  const now = new Date("2026-01-15T12:00:00Z");
  for (const zone of [null, "", "Foo/Bar", "+05:30"]) {
    assert.deepEqual(cached(zone, now), timeZoneInfo(zone, now), String(zone));
    assert.equal(cached(zone, now).time_zone, null);
  }
  assert.equal(cached("UTC", new Date(NaN)).current_time, null);
});

Deno.test(`cache stays correct past MAX_CACHED_ZONES (${MAX_CACHED_ZONES}) case-variant ids`, () => {
  const cached = createTimeZoneCache();
  const now = new Date("2026-07-15T12:00:00Z");
  const base = "america/new_york";
  // ICU matches ids case-insensitively, so case variants are the only way to
  // present more distinct accepted ids than the IANA set holds.
  for (let i = 0; i < MAX_CACHED_ZONES + 50; i++) {
    const id = [...base].map((ch, k) => (i >> k) & 1 ? ch.toUpperCase() : ch).join("");
    const info = cached(id, now);
    assert.equal(info.offset, -14400, id);
    assert.equal(info.time_zone, id);
  }
});

Deno.test("cache at the last representable instant gives nulls, as timeZoneInfo does", () => {
  const cached = createTimeZoneCache();
  const end = new Date(8.64e15);
  assert.deepEqual(cached("Pacific/Kiritimati", end), timeZoneInfo("Pacific/Kiritimati", end));
  assert.equal(cached("Pacific/Kiritimati", end).offset, null);
});

Deno.test("the zone table is what ICU says now, for every zone (regenerate: deno task zones)", async () => {
  const stored = JSON.parse(
    await Deno.readTextFile(new URL("../../../src/core/place/zone_table.json", import.meta.url)),
  );
  assert.deepEqual(stored, zoneTable(await tableZones(), TABLE_FROM, TABLE_TO));
});

Deno.test("the cache answers from the zone table as from ICU: each segment's start, the minute before, its middle", () => {
  const table = JSON.parse(
    Deno.readTextFileSync(new URL("../../../src/core/place/zone_table.json", import.meta.url)),
  ) as { zones: Record<string, [number, number, number, string][]> };
  const cache = createTimeZoneCache();
  for (const [zone, segments] of Object.entries(table.zones)) {
    segments.forEach(([start], i) => {
      const end = segments[i + 1]?.[0] ?? start + 86_400 * 30;
      for (const at of [start, start - 60, Math.floor((start + end) / 2)]) {
        if (at * 1000 < TABLE_FROM) continue;
        const now = new Date(at * 1000);
        const { current_time: _a, ...fromTable } = cache(zone, now);
        const { current_time: _b, ...fromIcu } = timeZoneInfo(zone, now);
        assert.deepEqual(fromTable, fromIcu, `${zone} at ${now.toISOString()}`);
      }
    });
  }
});
