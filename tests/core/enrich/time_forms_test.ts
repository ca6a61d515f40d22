import assert from "node:assert/strict";
import { createTimeReader, NO_TIME } from "../../../src/core/enrich/record_time.ts";
import { createTimeForms, TIME_FORMS } from "../../../src/core/enrich/time_forms.ts";
import { checkTimeZone } from "../../../src/core/enrich/time_zone.ts";

const read = createTimeForms(null);
const iso = (text: string, zone: string | null = null) => {
  const time = createTimeForms(zone)(text);
  assert.ok(time instanceof Date, `${text}: ${time}`);
  return time.toISOString();
};

Deno.test("time forms: RFC 3339 / ISO 8601 with T or a space, any zone spelling, any fraction", () => {
  const cases: [string, string][] = [
    ["2026-10-28 00:00:00 +0000", "2026-10-28T00:00:00.000Z"], // Shopify's export
    ["2026-10-28T13:55:36Z", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28t13:55:36z", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28 13:55:36Z", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28 13:55:36 Z", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28T15:55:36+02:00", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28T15:55:36 +02:00", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28T08:55:36-0500", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28 19:25:36+05:30", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28T15:55:36+02", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28 13:55:36 UTC", "2026-10-28T13:55:36.000Z"], // Rails
    ["2026-10-28 13:55:36 GMT", "2026-10-28T13:55:36.000Z"],
    ["2026-10-28T13:55:36.5Z", "2026-10-28T13:55:36.500Z"],
    ["2026-10-28T13:55:36.123456789Z", "2026-10-28T13:55:36.123Z"], // cut to the ms
    ["2026-10-28T13:55:36,25Z", "2026-10-28T13:55:36.250Z"],
    ["2026-10-28 13:55:36.987654 +0000", "2026-10-28T13:55:36.987Z"],
    ["2026-10-28T13:55Z", "2026-10-28T13:55:00.000Z"],
    ["2026-10-28T13:55:36", "2026-10-28T13:55:36.000Z"], // no zone: UTC
    ["2026-10-28", "2026-10-28T00:00:00.000Z"],
    ["2024-02-29T12:00:00Z", "2024-02-29T12:00:00.000Z"],
    ["2026-10-28T13:55:36+14:00", "2026-10-27T23:55:36.000Z"], // Kiribati, the widest
    ["2026-10-28T13:55:36-12:00", "2026-10-29T01:55:36.000Z"],
  ];
  for (const [text, expected] of cases) assert.equal(iso(text), expected, text);
});

Deno.test("time forms: epoch seconds, milliseconds and microseconds by magnitude, as text", () => {
  const cases: [string, string][] = [
    ["100000000", "1973-03-03T09:46:40.000Z"], // the smallest: 9 digits
    ["1764320000", "2025-11-28T08:53:20.000Z"],
    ["1764320000.5", "2025-11-28T08:53:20.500Z"],
    ["1764320000.123", "2025-11-28T08:53:20.123Z"], // from the digits: not 122.99… ms
    ["99999999999", "5138-11-16T09:46:39.000Z"], // the largest in seconds
    ["100000000000", "1973-03-03T09:46:40.000Z"], // 12 digits: milliseconds
    ["1764320000000", "2025-11-28T08:53:20.000Z"], // pino's `time`
    ["1764320000123.9", "2025-11-28T08:53:20.123Z"],
    ["100000000000000", "1973-03-03T09:46:40.000Z"], // 15 digits: microseconds
    ["1764320000123456", "2025-11-28T08:53:20.123Z"],
    ["99999999999999999", "5138-11-16T09:46:39.999Z"],
  ];
  for (const [text, expected] of cases) assert.equal(iso(text), expected, text);
});

Deno.test("time forms: the access log's time, with or without its brackets", () => {
  assert.equal(iso("10/Oct/2026:13:55:36 -0700"), "2026-10-10T20:55:36.000Z");
  assert.equal(iso("[10/Oct/2026:13:55:36 -0700]"), "2026-10-10T20:55:36.000Z");
  assert.equal(iso("[28/Feb/2026:23:59:59 +0000]"), "2026-02-28T23:59:59.000Z");
  assert.equal(iso("01/jan/2026:00:00:00 +0100"), "2025-12-31T23:00:00.000Z");
});

Deno.test("time forms: fields out of range are refused, naming the time, why, and the forms (epochs too)", () => {
  const cases: [string, RegExp][] = [
    ["2026-02-31T00:00:00Z", /February 2026 has no day 31 \(it has 28\)/],
    ["2026-02-29", /February 2026 has no day 29/],
    ["2026-04-31 10:00:00 +0000", /April 2026 has no day 31 \(it has 30\)/],
    ["2026-00-10", /there is no month 0/],
    ["2026-13-01T00:00:00Z", /there is no month 13/],
    ["2026-10-28T25:00:00Z", /there is no hour 25/],
    ["2026-10-28T24:00:00Z", /there is no hour 24/],
    ["2026-10-28T13:61:00Z", /there is no minute 61/],
    ["2026-10-28T13:55:60Z", /there is no second 60/],
    ["2026-10-28T13:55:36+15:00", /the zone \+15:00 is beyond ±14:00/],
    ["2026-10-28T13:55:36-1430", /the zone -14:30 is beyond ±14:00/],
    ["2026-10-28T13:55:36+05:75", /the zone \+05:75 is beyond ±14:00/],
    ["1969-12-31T23:59:59Z", /the year 1969 is before 1970/],
    ["32/Oct/2026:13:55:36 -0700", /October 2026 has no day 32/],
    ["10/Foo/2026:13:55:36 -0700", /"Foo" is not a month/],
    ["10/Oct/2026:25:55:36 -0700", /there is no hour 25/],
    ["10/Oct/2026:13:55:36 +1500", /beyond ±14:00/],
    ["20261028", /an epoch time has 9 digits at least/],
    ["99999999", /an epoch time has 9 digits at least/],
    ["100000000000000000", /17 digits at most/],
    ["-1764320000", /not one of the forms read/],
    ["1764320000e3", /not one of the forms read/],
    ["yesterday", /not one of the forms read/],
    ["2026-10-28T13:55:36 +02:00 extra", /not one of the forms read/],
    ["28.10.2026 13:55", /not one of the forms read/],
  ];
  for (const [text, why] of cases) {
    const time = read(text);
    assert.equal(typeof time, "string", `${text} is refused`);
    assert.ok(
      (time as string).startsWith(`Invalid time ${JSON.stringify(text)}: `),
      time as string,
    );
    assert.match(time as string, why, text);
    assert.ok((time as string).endsWith(`; ${TIME_FORMS}`), text);
  }
  assert.match(TIME_FORMS, /epoch seconds, milliseconds or microseconds/);
  assert.match(TIME_FORMS, /2026-10-28 13:55:36\.250 \+0000/);
});

Deno.test("time reader: an empty time is none; the last text is remembered; the text is trimmed", () => {
  const reader = createTimeReader();
  assert.equal(reader(""), NO_TIME);
  assert.equal(reader("   "), NO_TIME);
  const first = reader(" 1764320000000 ");
  assert.ok(first instanceof Date);
  assert.equal(reader(" 1764320000000 "), first, "the same text: the same answer");
  assert.equal((reader("1764320000") as Date).getTime(), first.getTime());
});

Deno.test("--time-zone: a time without a zone is in it; one with a zone keeps its own", () => {
  assert.equal(iso("2026-07-01 12:00:00", "Europe/Berlin"), "2026-07-01T10:00:00.000Z"); // CEST
  assert.equal(iso("2026-01-15 12:00:00", "Europe/Berlin"), "2026-01-15T11:00:00.000Z"); // CET
  assert.equal(iso("2026-10-28", "Asia/Kolkata"), "2026-10-27T18:30:00.000Z"); // a date: midnight
  assert.equal(iso("2026-07-01T12:00:00Z", "Europe/Berlin"), "2026-07-01T12:00:00.000Z");
  assert.equal(iso("2026-07-01T12:00:00+01:00", "Europe/Berlin"), "2026-07-01T11:00:00.000Z");
  assert.equal(iso("1764320000", "Europe/Berlin"), "2025-11-28T08:53:20.000Z"); // epochs are UTC
  assert.equal(iso("2026-07-01 12:00:00", "UTC"), "2026-07-01T12:00:00.000Z");
});

Deno.test("--time-zone across a change of offset: a gap moves forward, an overlap takes the first", () => {
  const ny = "America/New_York"; // 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST
  assert.equal(iso("2026-03-08 01:59:59", ny), "2026-03-08T06:59:59.000Z"); // EST
  assert.equal(iso("2026-03-08 02:30:00", ny), "2026-03-08T07:30:00.000Z"); // the gap: 03:30 EDT
  assert.equal(iso("2026-03-08 03:00:00", ny), "2026-03-08T07:00:00.000Z"); // EDT
  assert.equal(iso("2026-11-01 00:59:59", ny), "2026-11-01T04:59:59.000Z"); // EDT
  assert.equal(iso("2026-11-01 01:30:00", ny), "2026-11-01T05:30:00.000Z"); // twice: the first (EDT)
  assert.equal(iso("2026-11-01 02:00:00", ny), "2026-11-01T07:00:00.000Z"); // EST
  // Lord Howe moves by half an hour: 2026-04-05 02:00 +11:00 → 01:30 +10:30.
  assert.equal(iso("2026-04-05 01:45:00", "Australia/Lord_Howe"), "2026-04-04T14:45:00.000Z");
  // Every wall time of a fall-back day reads to an instant that is that wall time there.
  const berlin = createTimeForms("Europe/Berlin");
  const wall = new Intl.DateTimeFormat("sv-SE", {
    timeZone: "Europe/Berlin",
    dateStyle: "short",
    timeStyle: "medium",
  });
  for (let minute = 0; minute < 24 * 60; minute += 7) {
    const text = `2026-10-25 ${String(Math.floor(minute / 60)).padStart(2, "0")}:${
      String(minute % 60).padStart(2, "0")
    }:00`;
    assert.equal(wall.format(berlin(text) as Date), text, text);
  }
});

Deno.test("--time-zone names are checked: an IANA name, as Intl spells it", () => {
  assert.equal(checkTimeZone("Europe/Berlin"), "Europe/Berlin");
  assert.equal(checkTimeZone(" america/new_york "), "America/New_York");
  assert.equal(checkTimeZone("UTC"), "UTC");
  for (const bad of ["", "Mars/Olympus_Mons", "Europe/Berlin; rm -rf", "CEST+2"]) {
    const result = checkTimeZone(bad);
    assert.ok(result instanceof Error, bad);
    assert.equal(
      result.message,
      `Invalid --time-zone ${
        JSON.stringify(bad)
      }: expected an IANA time zone name such as UTC, Europe/Berlin or America/New_York`,
    );
  }
});
