/**
 * A record's time in the forms real sources write it, read to an instant:
 *
 * - RFC 3339 / ISO 8601: a date (`2026-10-28`), or a date and a time with `T`
 *   or a space between (`2026-10-28T13:55:36`, `2026-10-28 13:55`), seconds
 *   and any fraction of them optional (`.5`, `.123456789`; read to the ms), a
 *   zone optional and a space before it allowed: `Z`, `UTC`, `GMT`, `+01:00`,
 *   `+0100` or `+01` (Shopify's `2026-10-28 00:00:00 +0000`, Rails' `… UTC`);
 * - epoch numbers, as numbers or digit strings, fractions allowed, their unit
 *   told by magnitude: below 10^11 seconds (9 to 11 digits, 1973-03-03 to
 *   5138-11-16), below 10^14 milliseconds (12 to 14 digits, JavaScript's
 *   and pino's), below 10^17 microseconds (15 to 17 digits); anything smaller
 *   than 10^8 (a year, `20261028`) or from 10^17 on is refused rather than
 *   read in the wrong unit;
 * - the access-log time, nginx's and Apache's `%t`: `10/Oct/2026:13:55:36 -0700`,
 *   with or without its brackets.
 *
 * Every field is range-checked: month 1–12, a day the month has (no 31
 * February), hour 0–23, minute and second 0–59 (no leap second), a zone within
 * ±14:00 and its minutes 0–59, a year from 1970 to 9999. A time without a zone
 * is in `zone` (an IANA name, time_zone.ts), else UTC.
 */

import { quoteInput } from "../../base/errors.ts";
import { createZoneResolver } from "./time_zone.ts";

/** A time read: the instant, or why the text is not one of the forms (the message to show). */
export type TimeRead = Date | string;

/** The forms, for every message about a time that is not one. */
export const TIME_FORMS =
  "expected RFC 3339 / ISO 8601 (2026-10-28T13:55:36Z, 2026-10-28 13:55:36.250 +0000, " +
  "2026-10-28T15:55:36+02:00, 2026-10-28), epoch seconds, milliseconds or microseconds " +
  "(1792936536, 1792936536000, 1792936536000000) or an access log's 28/Oct/2026:13:55:36 +0000";

const ISO =
  /^(\d{4})-(\d\d)-(\d\d)(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)? ?(?:([Zz]|UTC|GMT)|([+-])(\d\d)(?::?(\d\d))?)?)?$/;
const EPOCH = /^(\d+)(?:\.(\d+))?$/;
const CLF = /^\[?(\d\d)\/([A-Za-z]{3})\/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d):?(\d\d)\]?$/;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/**
 * Epoch cut-offs, in integer digits (leading zeros aside), which is the magnitude exactly:
 * from 10^8 (9 digits), seconds below 10^11, ms below 10^14, µs below 10^17.
 */
const EPOCH_DIGITS_MIN = 9;
const SECONDS_DIGITS = 11;
const MILLISECONDS_DIGITS = 14;
const MICROSECONDS_DIGITS = 17;

/** Largest zone offset, in minutes (Kiribati's +14:00, the widest in use). */
const ZONE_LIMIT = 14 * 60;

/**
 * A reader of times, `zone` for those without one (null: UTC). The text should be
 * trimmed; an empty one is not a time.
 */
export function createTimeForms(zone: string | null): (text: string) => TimeRead {
  const resolve = zone === null || zone === "UTC" ? null : createZoneResolver(zone);
  return (text) => readTimeForms(text, resolve);
}

function readTimeForms(text: string, resolve: ((wall: number) => number) | null): TimeRead {
  const iso = ISO.exec(text);
  if (iso) {
    const [, y, mo, d, h = "0", mi = "0", s = "0", fraction, utc, sign, zh, zm = "0"] = iso;
    const wall = wallTime(text, +y!, +mo!, +d!, +h, +mi, +s, fraction);
    if (typeof wall === "string") return wall;
    if (sign !== undefined) {
      const zone = zoneMinutes(text, sign, +zh!, +zm);
      return typeof zone === "string" ? zone : new Date(wall - zone * 60_000);
    }
    if (utc !== undefined || resolve === null) return new Date(wall);
    return new Date(resolve(wall));
  }
  const epoch = EPOCH.exec(text);
  if (epoch) return epochTime(text, epoch[1]!, epoch[2]);
  const clf = CLF.exec(text);
  if (clf) {
    const [, d, name, y, h, mi, s, sign, zh, zm] = clf;
    const month = MONTHS.indexOf(name!.toLowerCase());
    if (month === -1) return invalid(text, `${JSON.stringify(name)} is not a month`);
    const wall = wallTime(text, +y!, month + 1, +d!, +h!, +mi!, +s!, undefined);
    if (typeof wall === "string") return wall;
    const zone = zoneMinutes(text, sign!, +zh!, +zm!);
    return typeof zone === "string" ? zone : new Date(wall - zone * 60_000);
  }
  return invalid(text, "not one of the forms read");
}

/** The message for a time that is not one. */
function invalid(text: string, why: string): string {
  return `Invalid time ${quoteInput(text)}: ${why}; ${TIME_FORMS}`;
}

/** The fields as a UTC instant (ms), or the message naming the one out of range. */
function wallTime(
  text: string,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  fraction: string | undefined,
): number | string {
  if (year < 1970) return invalid(text, `the year ${year} is before 1970`);
  if (month < 1 || month > 12) return invalid(text, `there is no month ${month}`);
  const days = daysIn(year, month);
  if (day < 1 || day > days) {
    return invalid(text, `${MONTH_NAMES[month - 1]} ${year} has no day ${day} (it has ${days})`);
  }
  if (hour > 23) return invalid(text, `there is no hour ${hour} (0 to 23)`);
  if (minute > 59) return invalid(text, `there is no minute ${minute} (0 to 59)`);
  if (second > 59) return invalid(text, `there is no second ${second} (0 to 59)`);
  // Read to the millisecond, as a Date holds it: further digits are cut, not rounded.
  const ms = fraction === undefined ? 0 : +(fraction + "00").slice(0, 3);
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** A zone's offset in minutes east of UTC, or the message when it is out of range. */
function zoneMinutes(text: string, sign: string, hours: number, minutes: number): number | string {
  const offset = hours * 60 + minutes;
  if (minutes > 59 || offset > ZONE_LIMIT) {
    return invalid(text, `the zone ${sign}${pad(hours)}:${pad(minutes)} is beyond ±14:00`);
  }
  return sign === "-" ? -offset : offset;
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * An epoch number (its integer digits and fraction) in the unit its magnitude says, read
 * from the digits (no floating-point product: `1792936536.123` is 123 ms past, not 122.99…).
 */
function epochTime(text: string, whole: string, fraction: string | undefined): TimeRead {
  const digits = whole.replace(/^0+/, "");
  if (digits.length < EPOCH_DIGITS_MIN) {
    return invalid(text, "an epoch time has 9 digits at least (10^8 seconds is 1973-03-03)");
  }
  if (digits.length <= SECONDS_DIGITS) {
    const ms = fraction === undefined ? 0 : +(fraction + "00").slice(0, 3);
    return new Date(+digits * 1000 + ms);
  }
  if (digits.length <= MILLISECONDS_DIGITS) return new Date(+digits);
  // Microseconds: the last three digits are below the millisecond a Date holds.
  if (digits.length <= MICROSECONDS_DIGITS) return new Date(+digits.slice(0, -3));
  return invalid(text, "an epoch time has 17 digits at most (microseconds)");
}
