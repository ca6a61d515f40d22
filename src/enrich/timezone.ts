/**
 * Facts about an IANA time zone at a given instant, from ICU (through `Intl`).
 *
 * `timeZoneInfo` computes everything from scratch (the reference);
 * `createTimeZoneCache` returns the per-lookup fast path.
 *
 * @module
 */

import type { TimeZoneInfo } from "../types.ts";

/**
 * English locales asked, in order, for a short zone name. ICU gives most
 * zones a name in only some English locales ("GMT+1" elsewhere); each locale
 * here adds names the earlier ones lack (surveyed over all ICU zones): en-US (EST, PST, HST…), en-GB (CET, BST, WET…), en-AU/NZ
 * (AEST, NZDT, LHDT…), en-IN (IST), en-CA (NST, MYT…), en-IE (IST in Dublin),
 * en-ZA (SAST, CAT, EAT, WAT), en-SG (SGT), en-HK (HKT), en-GU (ChST).
 */
const ABBR_LOCALES = [
  "en-US",
  "en-GB",
  "en-AU",
  "en-NZ",
  "en-IN",
  "en-CA",
  "en-IE",
  "en-ZA",
  "en-SG",
  "en-HK",
  "en-GU",
] as const;

/** An abbreviation: letters only. Rejects "GMT+1", "GMT+5:30" and "Gulf Time" (en-CA). */
const ALPHABETIC = /^[A-Za-z]{2,6}$/;

/** ICU's generic names for a zero offset, kept only when no locale knows better. */
const ZERO_OFFSET_NAMES = new Set(["GMT", "UTC"]);

/** IANA-style id ("America/New_York", "Etc/GMT+5", "UTC"); rejects offsets like "+05:30". */
const ZONE_ID = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** ICU's "longOffset" name in en-US: "GMT", "GMT+05:30", "GMT-04:56:02" (historic LMT). */
const LONG_OFFSET = /^GMT(?:([+\u2212-])(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

/** Upper bound on cached zones; IANA has ~600 ids with aliases, so only case-variant junk hits it. */
export const MAX_CACHED_ZONES = 1024;

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60_000;

/** The facts that stay fixed for a zone within one UTC minute. */
interface ZoneFacts {
  offset: number;
  utc: string;
  abbr: string;
  is_dst: boolean;
}

/** A TimeZoneInfo with every field null: no zone, unknown zone or invalid date. */
function noTimeZone(): TimeZoneInfo {
  return { time_zone: null, abbr: null, offset: null, is_dst: null, utc: null, current_time: null };
}

/** The formatter that yields a zone's UTC offset, or null when ICU does not know the zone. */
function offsetFormatter(zone: string): Intl.DateTimeFormat | null {
  if (!ZONE_ID.test(zone)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
  } catch {
    return null; // RangeError: unknown time zone
  }
}

/** Offset in seconds east of UTC at epoch milliseconds `ms`. */
function offsetAt(formatter: Intl.DateTimeFormat, ms: number): number {
  const name = formatter.formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? "";
  const match = LONG_OFFSET.exec(name);
  if (match === null) throw new Error(`unexpected ICU offset name: ${name}`);
  if (match[1] === undefined) return 0;
  const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0);
  return match[1] === "+" ? seconds : -seconds;
}

/**
 * The zone's standard offset in `year`: the smaller of its offsets at
 * 1 January and 1 July 00:00 UTC. Summer time always moves clocks forward
 * (in the northern summer in the north, the southern one in the south), so
 * the smaller one is standard in both hemispheres.
 */
function standardOffset(formatter: Intl.DateTimeFormat, year: number): number {
  return Math.min(
    offsetAt(formatter, Date.UTC(year, 0, 1)),
    offsetAt(formatter, Date.UTC(year, 6, 1)),
  );
}

/** "+05:30" for 19800 with `separator` ":", "+0530" with ""; seconds only when non-zero. */
export function formatOffset(offset: number, separator: ":" | ""): string {
  const abs = Math.abs(offset);
  const hh = String(Math.floor(abs / 3600)).padStart(2, "0");
  const mm = String(Math.floor((abs % 3600) / 60)).padStart(2, "0");
  const ss = abs % 60;
  const tail = ss === 0 ? "" : separator + String(ss).padStart(2, "0");
  return `${offset < 0 ? "-" : "+"}${hh}${separator}${mm}${tail}`;
}

/**
 * The zone's abbreviation at `ms`: the first alphabetic short name any of
 * ABBR_LOCALES gives, except that ICU's generic "GMT"/"UTC" (which it prints
 * for any zero offset) only counts when no locale has a specific name
 * (Lisbon in winter: en-GB "WET" beats en-US "GMT"; London in winter stays
 * "GMT"; the UTC zone stays "UTC"). Else the offset as "+HHMM" ("+0545").
 */
function abbrAt(zone: string, ms: number, offset: number): string {
  let generic: string | undefined;
  for (const locale of ABBR_LOCALES) {
    const name = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: "short" })
      .formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? "";
    if (!ALPHABETIC.test(name)) continue;
    if (!ZERO_OFFSET_NAMES.has(name)) return name;
    // ICU only prints bare GMT/UTC for a zero offset; the check keeps it honest.
    if (offset === 0) generic ??= name;
  }
  return generic ?? formatOffset(offset, "");
}

/** Computes a zone's facts at `ms`, getting the standard offset and abbr from the caller. */
function zoneFacts(
  formatter: Intl.DateTimeFormat,
  ms: number,
  standard: (year: number) => number,
  abbr: (offset: number) => string,
): ZoneFacts {
  const offset = offsetAt(formatter, ms);
  return {
    offset,
    utc: formatOffset(offset, ":"),
    abbr: abbr(offset),
    is_dst: offset > standard(new Date(ms).getUTCFullYear()),
  };
}

/** Builds the result; `current_time` is plain arithmetic on the offset. */
function toInfo(zone: string, facts: ZoneFacts, ms: number): TimeZoneInfo {
  const second = Math.floor(ms / MS_PER_SECOND) * MS_PER_SECOND;
  const iso = new Date(second + facts.offset * MS_PER_SECOND).toISOString();
  return {
    time_zone: zone,
    abbr: facts.abbr,
    offset: facts.offset,
    is_dst: facts.is_dst,
    utc: facts.utc,
    // Drop ".sssZ", append the zone's offset: "2026-11-22T01:23:45+01:00".
    current_time: iso.slice(0, iso.lastIndexOf(".")) + facts.utc,
  };
}

/**
 * Facts about IANA zone `zone` at instant `now`, computed from scratch.
 *
 * - `time_zone`: `zone` as given (ICU matches ids case-insensitively).
 * - `offset`: seconds east of UTC at `now`; `utc`: the same as "±HH:MM".
 * - `is_dst`: offset > standard offset, where standard is the smaller of the
 *   offsets at 1 January and 1 July (UTC) of `now`'s year. Zones whose tzdata
 *   uses negative DST (Europe/Dublin, Africa/Casablanca) thus count their
 *   summer/+01 time as DST, as people there would.
 * - `abbr`: see the abbreviation rule (alphabetic English name, else "+HHMM").
 * - `current_time`: local time at `now`, ISO 8601, seconds, offset, no millis.
 *
 * Null, non-IANA or unknown `zone` or an invalid `now` give every field null;
 * never throws. Slow (creates a dozen formatters); use createTimeZoneCache per lookup.
 */
export function timeZoneInfo(zone: string | null, now: Date): TimeZoneInfo {
  const ms = now.getTime();
  if (zone === null || !Number.isFinite(ms)) return noTimeZone();
  const formatter = offsetFormatter(zone);
  if (formatter === null) return noTimeZone();
  try {
    const facts = zoneFacts(
      formatter,
      ms,
      (year) => standardOffset(formatter, year),
      (offset) => abbrAt(zone, ms, offset),
    );
    return toInfo(zone, facts, ms);
  } catch {
    // Only at the edges: local time past the Date range, or an ICU format change.
    return noTimeZone();
  }
}

/** What the cache keeps per zone. */
interface ZoneEntry {
  formatter: Intl.DateTimeFormat;
  /** UTC minute (epoch ms / 60000, floored) that `facts` hold for; NaN until computed. */
  minute: number;
  facts: ZoneFacts | null;
  /** Standard offset of `standardYear`: two ICU calls a year instead of two a minute. */
  standardYear: number;
  standardOffset: number;
  /** Abbreviation per offset: a zone has one name per offset (EST at -5h, EDT at -4h). */
  abbrByOffset: Map<number, string>;
  /** The whole answer for UTC second `second` (epoch ms / 1000, floored): shared, frozen. */
  second: number;
  info: TimeZoneInfo | null;
}

/** A `(zone, now) => TimeZoneInfo` function, as returned by createTimeZoneCache. */
export type TimeZoneLookup = (zone: string | null, now: Date) => TimeZoneInfo;

/**
 * A memoised {@link timeZoneInfo} for the per-lookup path: same answers, but
 * per zone it keeps one reused `Intl.DateTimeFormat` and the facts (offset,
 * utc, abbr, is_dst) of the last UTC minute asked for, recomputing (one ICU
 * call) when the minute changes. A warm call does no Intl work: `current_time`
 * is arithmetic on the cached offset, and the answer itself is reused within
 * the same UTC second. Offsets change only at transitions,
 * which since the 1970s all fall on whole UTC minutes, so a minute is safe.
 *
 * Bounded: keys are zone ids ICU accepts, i.e. the finite IANA set (~600 with
 * aliases); unknown ids are never stored, and past MAX_CACHED_ZONES (reachable
 * only by case variants) answers are computed without caching.
 */
export function createTimeZoneCache(): TimeZoneLookup {
  const entries = new Map<string, ZoneEntry>();
  return (zone, now) => {
    const ms = now.getTime();
    if (zone === null || !Number.isFinite(ms)) return noTimeZone();
    let entry = entries.get(zone);
    if (entry === undefined) {
      const formatter = offsetFormatter(zone);
      if (formatter === null) return noTimeZone();
      entry = {
        formatter,
        minute: NaN,
        facts: null,
        standardYear: NaN,
        standardOffset: 0,
        abbrByOffset: new Map(),
        second: NaN,
        info: null,
      };
      if (entries.size < MAX_CACHED_ZONES) entries.set(zone, entry);
    }
    // current_time has whole seconds, so every lookup within a second shares one answer.
    const second = Math.floor(ms / MS_PER_SECOND);
    if (entry.second === second && entry.info !== null) return entry.info;
    const warm = entry.minute === Math.floor(ms / MS_PER_MINUTE) ? entry.facts : null;
    try {
      entry.info = Object.freeze(toInfo(zone, warm ?? refresh(entry, zone, ms), ms));
      entry.second = second;
      return entry.info;
    } catch {
      return noTimeZone(); // as in timeZoneInfo: Date-range edges only
    }
  };
}

/** Recomputes an entry's facts for the minute of `ms`, reusing its formatter and memos. */
function refresh(entry: ZoneEntry, zone: string, ms: number): ZoneFacts {
  const standard = (year: number): number => {
    if (entry.standardYear !== year) {
      entry.standardOffset = standardOffset(entry.formatter, year);
      entry.standardYear = year;
    }
    return entry.standardOffset;
  };
  const abbr = (offset: number): string => {
    let name = entry.abbrByOffset.get(offset);
    if (name === undefined) {
      name = abbrAt(zone, ms, offset);
      entry.abbrByOffset.set(offset, name);
    }
    return name;
  };
  const facts = zoneFacts(entry.formatter, ms, standard, abbr);
  entry.facts = facts;
  entry.minute = Math.floor(ms / MS_PER_MINUTE);
  return facts;
}
