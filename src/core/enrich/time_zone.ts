/**
 * The zone enrich reads a time without one in (`--time-zone Europe/Berlin`):
 * an IANA name, checked with Intl, and the instant a wall-clock time there
 * stands for. Around a change of offset, a wall time may not exist (the clocks
 * went forward: 02:30 on a spring-forward night) or exist twice (they went
 * back: 02:30 on a fall-back night). As Temporal's and JavaScript's
 * `compatible` choice: a time in a gap is moved forward by the gap (02:30 →
 * 03:30), a time in an overlap is the first of the two (the earlier instant).
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Wall hours remembered with their offset: a log's times share a few hours (cleared when full). */
const HOURS_KEPT = 4096;

/**
 * The zone named `name`, as Intl names it (`europe/berlin` → `Europe/Berlin`),
 * or an Error saying why it is not one.
 */
export function checkTimeZone(name: string): string | Error {
  const trimmed = name.trim();
  try {
    if (trimmed === "") throw new RangeError("empty");
    return new Intl.DateTimeFormat("en-US", { timeZone: trimmed }).resolvedOptions().timeZone;
  } catch {
    return new Error(
      `Invalid --time-zone ${
        JSON.stringify(name)
      }: expected an IANA time zone name such as UTC, Europe/Berlin or America/New_York`,
    );
  }
}

/**
 * The instant (epoch ms) of a wall-clock time in `zone`, the wall time given as if it
 * were UTC (`Date.UTC` of its fields). `zone` must have passed checkTimeZone.
 */
export function createZoneResolver(zone: string): (wall: number) => number {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  /** The zone's offset (ms ahead of UTC) at the instant `utc`. */
  const offsetAt = (utc: number): number => {
    const at = Math.floor(utc / 1000) * 1000;
    const f: Record<string, number> = {};
    for (const part of format.formatToParts(at)) {
      if (part.type !== "literal") f[part.type] = Number(part.value);
    }
    return Date.UTC(f.year!, f.month! - 1, f.day!, f.hour!, f.minute!, f.second!) - at;
  };
  // A wall hour's offset when the same holds a day either side (NaN: it changes near there).
  const hours = new Map<number, number>();
  return (wall) => {
    const hour = Math.floor(wall / HOUR) * HOUR;
    let steady = hours.get(hour);
    if (steady === undefined) {
      const before = offsetAt(hour - DAY);
      steady = offsetAt(hour + DAY) === before ? before : NaN;
      if (hours.size >= HOURS_KEPT) hours.clear();
      hours.set(hour, steady);
    }
    if (!Number.isNaN(steady)) return wall - steady;
    // The offset changes within a day of this time: try both offsets.
    const before = offsetAt(wall - DAY);
    const after = offsetAt(wall + DAY);
    const early = wall - before;
    const late = wall - after;
    const earlyHolds = offsetAt(early) === before;
    const lateHolds = offsetAt(late) === after;
    if (earlyHolds && lateHolds) return Math.min(early, late); // an overlap: the first
    if (earlyHolds) return early;
    if (lateHolds) return late;
    return early; // a gap: the offset before it, which lands past the gap
  };
}
