/**
 * Facts about an IANA time zone at a given instant, from ICU (through `Intl`).
 *
 * `timeZoneInfo` computes everything from scratch (the reference);
 * `createTimeZoneCache` returns the per-lookup fast path.
 *
 * @module
 */

import type { TimeZoneInfo } from "../../base/types.ts";
import ZONE_TABLE from "./zone_table.json" with { type: "json" };
import { sharedPart } from "../../base/shared_part.ts";

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
export function noTimeZone(): TimeZoneInfo {
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

/** ICU's long specific name in en-US: "Eastern Daylight Time", "Yukon Time", "GMT+01:00". */
function longNameFormatter(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "long" });
}

/** ICU's fallback when a zone has no name at an instant: "GMT", "GMT+01:00", "GMT-03:00". */
const GMT_FORMAT = /^GMT(?:[+\u2212-]|$)/;

/**
 * CLDR's English names mark daylight time in every name ICU shows for it
 * ("Eastern Daylight Time", "British Summer Time", "Chile Summer Time"); a
 * standard name never holds either word ("Irish Standard Time", "Yukon Time").
 */
const DAYLIGHT_NAME = /\b(?:Daylight|Summer)\b/;

const MS_PER_WEEK = 7 * 86_400_000;

/** Weekly samples a lower offset needs on each side (about two months) to count as standard. */
const MIN_LOWER_WEEKS = 8;

/**
 * Whether the zone is on daylight-saving time at `ms` (decisions in docs/decisions.md,
 * "Time zones"): it is when the offset is above the zone's standard offset for that
 * date as tzdata defines it, and a negative DST (Irish winter GMT, Morocco's Ramadan
 * hour) counts as standard time.
 *
 * 1. Where ICU has a name for the zone at that instant, the name says it: ICU picks
 *    the daylight name exactly when its rules say DST, and English daylight names
 *    say "Daylight" or "Summer". This follows changes of standard time that offsets
 *    alone cannot see (Whitehorse kept -07 in November 2020, as standard time).
 * 2. Where ICU has only "GMT±hh:mm" (Casablanca, Amman since 2022, Troll, Jersey),
 *    the offsets decide: DST is an offset above one the zone keeps for about two
 *    months or more both in the year before and in the year after (Troll's summer
 *    +02 between its winters at +00). A dip of a few weeks (Ramadan in Casablanca)
 *    is not a standard time, and an offset kept for good (Amman's +03) is not DST.
 */
function isDstAt(
  offsets: Intl.DateTimeFormat,
  names: Intl.DateTimeFormat,
  ms: number,
  offset: number,
): boolean {
  const name = names.formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? "";
  if (!GMT_FORMAT.test(name)) return DAYLIGHT_NAME.test(name);
  let lowerBefore = 0;
  let lowerAfter = 0;
  for (let week = 1; week <= 52; week++) {
    if (offsetAt(offsets, ms - week * MS_PER_WEEK) < offset) lowerBefore++;
    if (offsetAt(offsets, ms + week * MS_PER_WEEK) < offset) lowerAfter++;
  }
  return lowerBefore >= MIN_LOWER_WEEKS && lowerAfter >= MIN_LOWER_WEEKS;
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

/** Computes a zone's facts at `ms`, getting the abbreviation from the caller. */
function zoneFacts(
  offsets: Intl.DateTimeFormat,
  names: Intl.DateTimeFormat,
  ms: number,
  abbr: (offset: number) => string,
): ZoneFacts {
  const offset = offsetAt(offsets, ms);
  return {
    offset,
    utc: formatOffset(offset, ":"),
    abbr: abbr(offset),
    is_dst: isDstAt(offsets, names, ms, offset),
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
 * - `is_dst`: the zone's rules at `now` (see isDstAt): true for daylight time
 *   only; tzdata's negative DST (Irish winter, Morocco's Ramadan hour) is standard.
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
      longNameFormatter(zone),
      ms,
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
  /** The zone's segments from the zone table (null: not in it, ICU answers). */
  segments: readonly Segment[] | null;
  /** ICU's offset formatter, made when first needed. */
  formatter: Intl.DateTimeFormat | null;
  /** UTC minute (epoch ms / 60000, floored) that `facts` hold for; NaN until computed. */
  minute: number;
  facts: ZoneFacts | null;
  /** ICU's long names, which tell daylight time from standard time (see isDstAt); made when first needed. */
  names: Intl.DateTimeFormat | null;
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
      // A zone of the table needs no formatter until an instant outside its years.
      const segments = SEGMENTS.get(zone) ?? null;
      const formatter = segments ? null : offsetFormatter(zone);
      if (segments === null && formatter === null) return noTimeZone();
      entry = {
        segments,
        formatter,
        minute: NaN,
        facts: null,
        names: null,
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
      entry.info = sharedPart(toInfo(zone, warm ?? refresh(entry, zone, ms), ms));
      entry.second = second;
      return entry.info;
    } catch {
      return noTimeZone(); // as in timeZoneInfo: Date-range edges only
    }
  };
}

/**
 * One stretch of a zone's time with the same facts: from `start` (epoch
 * seconds) until the next segment's start.
 */
type Segment = readonly [start: number, offset: number, isDst: 0 | 1, abbr: string];

/** What zone_table.json holds (written by tests/core/place/zone_table_gen.ts). */
interface ZoneTable {
  /** The instants (epoch seconds) the segments cover: [from, to). */
  from: number;
  to: number;
  zones: Record<string, Segment[]>;
}

const TABLE = ZONE_TABLE as unknown as ZoneTable;
const SEGMENTS = new Map(Object.entries(TABLE.zones));

/** The facts of the segment holding `ms`, or null outside the table's years. */
function segmentFacts(segments: readonly Segment[], ms: number): ZoneFacts | null {
  const seconds = Math.floor(ms / MS_PER_SECOND);
  if (seconds < TABLE.from || seconds >= TABLE.to || segments.length === 0) return null;
  let lo = 0;
  let hi = segments.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (segments[mid]![0] <= seconds) lo = mid;
    else hi = mid - 1;
  }
  const [, offset, isDst, abbr] = segments[lo]!;
  return { offset, utc: formatOffset(offset, ":"), abbr, is_dst: isDst === 1 };
}

const MS_PER_DAY = 86_400_000;

/**
 * Each zone's segments between `fromMs` and `toMs` as ICU gives them: the
 * offset and the long name are sampled daily, and where either changes the
 * change is found to the minute (transitions fall on whole minutes); each
 * segment's is_dst and abbreviation are what timeZoneInfo computes.
 */
export function zoneTable(zones: readonly string[], fromMs: number, toMs: number): ZoneTable {
  const table: ZoneTable = { from: fromMs / MS_PER_SECOND, to: toMs / MS_PER_SECOND, zones: {} };
  for (const zone of [...zones].sort()) {
    const offsets = offsetFormatter(zone);
    if (offsets === null) continue;
    const names = longNameFormatter(zone);
    const state = (ms: number) => `${offsetAt(offsets, ms)} ${nameAt(names, ms)}`;
    const segment = (ms: number): Segment => {
      const offset = offsetAt(offsets, ms);
      const isDst = isDstAt(offsets, names, ms, offset) ? 1 : 0;
      return [ms / MS_PER_SECOND, offset, isDst, abbrAt(zone, ms, offset)];
    };
    const segments = [segment(fromMs)];
    let current = state(fromMs);
    for (let day = fromMs + MS_PER_DAY; day < toMs; day += MS_PER_DAY) {
      if (state(day) === current) continue;
      let same = day - MS_PER_DAY; // still `current`
      let changed = day;
      while (changed - same > MS_PER_MINUTE) {
        const mid = same + Math.floor((changed - same) / 2 / MS_PER_MINUTE) * MS_PER_MINUTE;
        if (state(mid) === current) same = mid;
        else changed = mid;
      }
      segments.push(segment(changed));
      current = state(changed);
    }
    table.zones[zone] = segments;
  }
  return table;
}

function nameAt(names: Intl.DateTimeFormat, ms: number): string {
  return names.formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? "";
}

/**
 * Recomputes an entry's facts for the minute of `ms`: from the zone table
 * when it covers the instant (no ICU work), else with the entry's formatters.
 */
function refresh(entry: ZoneEntry, zone: string, ms: number): ZoneFacts {
  let facts = entry.segments ? segmentFacts(entry.segments, ms) : null;
  if (facts === null) {
    entry.formatter ??= offsetFormatter(zone);
    entry.names ??= longNameFormatter(zone);
    if (entry.formatter === null) throw new RangeError(`unknown time zone ${zone}`);
    const abbr = (offset: number): string => {
      let name = entry.abbrByOffset.get(offset);
      if (name === undefined) {
        name = abbrAt(zone, ms, offset);
        entry.abbrByOffset.set(offset, name);
      }
      return name;
    };
    facts = zoneFacts(entry.formatter, entry.names, ms, abbr);
  }
  entry.facts = facts;
  entry.minute = Math.floor(ms / MS_PER_MINUTE);
  return facts;
}
