import assert from "node:assert/strict";
import {
  createTimeZoneCache,
  MAX_CACHED_ZONES,
  timeZoneInfo,
  zoneAbbreviationTable,
} from "../../src/enrich/timezone.ts";

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

Deno.test("cache warm call within the same minute creates and calls no Intl formatter", () => {
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
    cached("Europe/Berlin", new Date("2026-07-15T12:01:00Z")); // next minute: recomputes
    assert.ok(calls > 0, "the counters see the recomputation");
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

Deno.test("the abbreviation table is what ICU says now, for every zone and offset (regenerate: zone_abbreviations_gen.ts)", async () => {
  const stored = JSON.parse(
    await Deno.readTextFile(new URL("../../src/enrich/zone_abbreviations.json", import.meta.url)),
  );
  const zones = Intl.supportedValuesOf("timeZone");
  assert.deepEqual(stored, zoneAbbreviationTable(zones));
  // And the cache, which reads the table, still answers as the from-scratch search does.
  const cache = createTimeZoneCache();
  for (const at of ["2026-01-15T12:00:00Z", "2026-07-15T12:00:00Z"]) {
    for (const zone of zones) {
      assert.equal(cache(zone, new Date(at)).abbr, timeZoneInfo(zone, new Date(at)).abbr, zone);
    }
  }
});
