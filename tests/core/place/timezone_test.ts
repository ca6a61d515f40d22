import assert from "node:assert/strict";
import { formatOffset, timeZoneInfo } from "../../../src/core/place/timezone.ts";
import type { TimeZoneInfo } from "../../../src/base/types.ts";
import { askZoneinfo } from "./zoneinfo_oracle.ts";
import { ignoredName } from "../../_skip.ts";

// ---------------------------------------------------------------------------
// Against Python's zoneinfo (independent tzdata), at fixed instants.

/** Fixed mid-winter and mid-summer (northern) instants; the millis must be dropped. */
const SEASONS = ["2026-01-15T12:34:56.789Z", "2026-07-15T12:34:56.789Z"];

const ZONES = [
  // with DST, both hemispheres
  "America/New_York",
  "Europe/Berlin",
  "Europe/London",
  "Australia/Sydney",
  "America/Santiago",
  // without DST
  "Asia/Kolkata",
  "Asia/Tokyo",
  "UTC",
  "Africa/Nairobi",
  // odd offsets: +05:45, half-hour DST, +12:45/+13:45
  "Asia/Kathmandu",
  "Australia/Lord_Howe",
  "Pacific/Chatham",
  "America/St_Johns",
];

/** 2026 transitions: the first instant of the new offset (checked below to be real). */
const TRANSITIONS: Array<{ zone: string; at: string; what: string }> = [
  { zone: "America/New_York", at: "2026-03-08T07:00:00Z", what: "spring forward" },
  { zone: "America/New_York", at: "2026-11-01T06:00:00Z", what: "fall back" },
  { zone: "Europe/Berlin", at: "2026-03-29T01:00:00Z", what: "spring forward" },
  { zone: "Europe/Berlin", at: "2026-10-25T01:00:00Z", what: "fall back" },
  { zone: "Europe/London", at: "2026-03-29T01:00:00Z", what: "spring forward" },
  { zone: "Europe/London", at: "2026-10-25T01:00:00Z", what: "fall back" },
  { zone: "Australia/Sydney", at: "2026-04-04T16:00:00Z", what: "fall back" },
  { zone: "Australia/Sydney", at: "2026-10-03T16:00:00Z", what: "spring forward" },
  { zone: "America/Santiago", at: "2026-04-05T03:00:00Z", what: "fall back" },
  { zone: "America/Santiago", at: "2026-09-06T04:00:00Z", what: "spring forward" },
  { zone: "Australia/Lord_Howe", at: "2026-04-04T15:00:00Z", what: "fall back 30 min" },
  { zone: "Australia/Lord_Howe", at: "2026-10-03T15:30:00Z", what: "spring forward 30 min" },
  { zone: "Pacific/Chatham", at: "2026-04-04T14:00:00Z", what: "fall back" },
  { zone: "Pacific/Chatham", at: "2026-09-26T14:00:00Z", what: "spring forward" },
];

interface Case {
  name: string;
  zone: string;
  ms: number;
}

const seasonCases: Case[] = ZONES.flatMap((zone) =>
  SEASONS.map((iso) => ({ name: `${zone} at ${iso}`, zone, ms: Date.parse(iso) }))
);
// The last millisecond before the change and the change itself.
const transitionCases: Array<[before: Case, after: Case]> = TRANSITIONS.map(
  ({ zone, at, what }) => {
    const ms = Date.parse(at);
    return [
      { name: `${zone} 1 ms before ${what} ${at}`, zone, ms: ms - 1 },
      { name: `${zone} at ${what} ${at}`, zone, ms },
    ];
  },
);
const allCases = [...seasonCases, ...transitionCases.flat()];

const oracle = await askZoneinfo(allCases.map((c) => [c.zone, Math.floor(c.ms / 1000)] as const));
const skipped = "skipped" in oracle ? oracle.skipped : null;

/** Python's answer for a case, in our result's terms. */
function expectedFromZoneinfo(c: Case): Omit<TimeZoneInfo, "abbr"> {
  if ("skipped" in oracle) throw new Error("oracle skipped");
  const answer = oracle.answers[allCases.indexOf(c)];
  assert.ok(answer, `no oracle answer for ${c.name}`);
  return {
    time_zone: c.zone,
    offset: answer.offset,
    // isoformat() ends in the ±HH:MM offset; none of these zones has seconds in it.
    utc: answer.local.slice(-6),
    // Positive DST only: tzdata's negative DST (Dublin, Casablanca) counts as standard.
    is_dst: answer.dst > 0,
    current_time: answer.local,
  };
}

/** Our answer without `abbr` (which Python spells differently, e.g. "-03" for Santiago). */
function ours(c: Case): Omit<TimeZoneInfo, "abbr"> {
  const { abbr: _abbr, ...rest } = timeZoneInfo(c.zone, new Date(c.ms));
  return rest;
}

for (const c of seasonCases) {
  Deno.test({
    name: ignoredName(`timeZoneInfo matches zoneinfo: ${c.name}`, skipped),
    ignore: skipped !== null,
    fn() {
      assert.deepEqual(ours(c), expectedFromZoneinfo(c));
    },
  });
}

for (const [before, after] of transitionCases) {
  Deno.test({
    name: ignoredName(`timeZoneInfo matches zoneinfo on both sides: ${after.name}`, skipped),
    ignore: skipped !== null,
    fn() {
      const expectedBefore = expectedFromZoneinfo(before);
      const expectedAfter = expectedFromZoneinfo(after);
      // Guards the fixture: the two instants really straddle a change.
      assert.notEqual(expectedBefore.offset, expectedAfter.offset, "not a transition");
      assert.deepEqual(ours(before), expectedBefore);
      assert.deepEqual(ours(after), expectedAfter);
    },
  });
}

// ---------------------------------------------------------------------------
// Hard-coded expectations, including abbr (pinned to what Deno's ICU gives).

/** One pinned row: `local` is the expected wall time, the offset is appended. */
function pin(
  zone: string,
  at: string,
  abbr: string,
  offset: number,
  isDst: boolean,
  local: string,
): { zone: string; at: string; expected: TimeZoneInfo } {
  const utc = formatOffset(offset, ":");
  return {
    zone,
    at,
    expected: { time_zone: zone, abbr, offset, is_dst: isDst, utc, current_time: local + utc },
  };
}

const PINNED = [
  pin("America/New_York", "2026-01-15T12:00:00Z", "EST", -18000, false, "2026-01-15T07:00:00"),
  pin("America/New_York", "2026-07-15T12:00:00Z", "EDT", -14400, true, "2026-07-15T08:00:00"),
  pin("Europe/Berlin", "2026-11-22T00:23:45Z", "CET", 3600, false, "2026-11-22T01:23:45"),
  pin("Europe/Berlin", "2026-07-15T12:00:00Z", "CEST", 7200, true, "2026-07-15T14:00:00"),
  pin("Europe/London", "2026-01-15T12:00:00Z", "GMT", 0, false, "2026-01-15T12:00:00"),
  pin("Europe/London", "2026-07-15T12:00:00Z", "BST", 3600, true, "2026-07-15T13:00:00"),
  // en-US says "GMT" for any zero offset; en-GB's specific "WET" wins.
  pin("Europe/Lisbon", "2026-01-15T12:00:00Z", "WET", 0, false, "2026-01-15T12:00:00"),
  // Irish Standard Time (summer) is Ireland's legal standard time, and tzdata's negative
  // DST in winter counts as standard time: Dublin is never on DST.
  pin("Europe/Dublin", "2026-01-15T12:00:00Z", "GMT", 0, false, "2026-01-15T12:00:00"),
  pin("Europe/Dublin", "2026-07-15T12:00:00Z", "IST", 3600, false, "2026-07-15T13:00:00"),
  pin("UTC", "2026-07-15T12:00:00Z", "UTC", 0, false, "2026-07-15T12:00:00"),
  pin("Australia/Sydney", "2026-01-15T12:00:00Z", "AEDT", 39600, true, "2026-01-15T23:00:00"),
  pin("Australia/Sydney", "2026-07-15T12:00:00Z", "AEST", 36000, false, "2026-07-15T22:00:00"),
  pin("America/Santiago", "2026-01-15T12:00:00Z", "-0300", -10800, true, "2026-01-15T09:00:00"),
  pin("Asia/Kolkata", "2026-01-15T12:00:00Z", "IST", 19800, false, "2026-01-15T17:30:00"),
  pin("Asia/Kathmandu", "2026-01-15T12:00:00Z", "NPT", 20700, false, "2026-01-15T17:45:00"),
  pin("Asia/Tokyo", "2026-01-15T12:00:00Z", "+0900", 32400, false, "2026-01-15T21:00:00"),
  pin("Africa/Nairobi", "2026-01-15T12:00:00Z", "EAT", 10800, false, "2026-01-15T15:00:00"),
  pin("America/St_Johns", "2026-01-15T12:00:00Z", "NST", -12600, false, "2026-01-15T08:30:00"),
  pin("Australia/Lord_Howe", "2026-01-15T12:00:00Z", "LHDT", 39600, true, "2026-01-15T23:00:00"),
  pin("Australia/Lord_Howe", "2026-07-15T12:00:00Z", "LHST", 37800, false, "2026-07-15T22:30:00"),
  pin("Pacific/Chatham", "2026-01-15T12:00:00Z", "CHADT", 49500, true, "2026-01-16T01:45:00"),
  pin("Etc/GMT+5", "2026-01-15T12:00:00Z", "-0500", -18000, false, "2026-01-15T07:00:00"),
];

for (const { zone, at, expected } of PINNED) {
  Deno.test(`timeZoneInfo pinned: ${zone} at ${at} is ${expected.abbr} ${expected.utc}`, () => {
    assert.deepEqual(timeZoneInfo(zone, new Date(at)), expected);
  });
}

const ALL_NULL: TimeZoneInfo = {
  time_zone: null,
  abbr: null,
  offset: null,
  is_dst: null,
  utc: null,
  current_time: null,
};

const INVALID: Array<{ input: string | null; at: string }> = [
  { input: null, at: "2026-01-15T12:00:00Z" },
  { input: "", at: "2026-01-15T12:00:00Z" },
  { input: "Foo/Bar", at: "2026-01-15T12:00:00Z" },
  { input: "America/New_York ", at: "2026-01-15T12:00:00Z" },
  { input: "+05:30", at: "2026-01-15T12:00:00Z" }, // an offset, not an IANA id
  { input: "../../etc/passwd", at: "2026-01-15T12:00:00Z" },
  { input: "America/New_York", at: "not a date" },
];

for (const { input, at } of INVALID) {
  Deno.test(`timeZoneInfo gives all nulls for zone ${JSON.stringify(input)} at ${at}`, () => {
    assert.deepEqual(timeZoneInfo(input, new Date(at)), ALL_NULL);
  });
}

const OFFSETS: Array<{ input: [number, ":" | ""]; expected: string }> = [
  { input: [19800, ":"], expected: "+05:30" },
  { input: [-10800, ":"], expected: "-03:00" },
  { input: [0, ":"], expected: "+00:00" },
  { input: [49500, ":"], expected: "+13:45" },
  { input: [20700, ""], expected: "+0545" },
  { input: [-34200, ""], expected: "-0930" },
  { input: [-17762, ":"], expected: "-04:56:02" }, // historic LMT keeps its seconds
];

for (const { input, expected } of OFFSETS) {
  Deno.test(`formatOffset(${input[0]}, "${input[1]}") is ${expected}`, () => {
    assert.equal(formatOffset(...input), expected);
  });
}

Deno.test("timeZoneInfo at the last representable instant gives nulls, not a RangeError", () => {
  // Local time in Kiritimati (+14:00) would lie past the Date range.
  const end = new Date(8.64e15);
  assert.deepEqual(timeZoneInfo("Pacific/Kiritimati", end), ALL_NULL);
  assert.equal(timeZoneInfo("UTC", end).current_time, "+275760-09-13T00:00:00+00:00");
});
