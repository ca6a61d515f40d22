/** The `at` parameter: a past time to answer the security lists for. */

import { HistoryUnavailableError, InvalidTimeError, quoteInput } from "../../base/errors.ts";
import type { History } from "./history.ts";

/** A date (`2026-11-20`, midnight UTC) or a date and time with its zone (`Z` or `+02:00`). */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2}))?$/;

const EXPECTED =
  "expected an ISO 8601 time with its zone, such as 2026-11-20T13:45:00Z or 2026-11-20T14:45:00+01:00, or a date such as 2026-11-20 (midnight UTC)";

/**
 * Reads `at`; absent or empty → null (the current lists). A time without a
 * zone is refused rather than guessed (the server's zone is not the caller's).
 *
 * @throws {InvalidTimeError} (400) naming `at` and the value when it is not such a time.
 * @example parseAt("2026-11-20T13:45:00Z")?.toISOString() // "2026-11-20T13:45:00.000Z"
 */
export function parseAt(text: string | null | undefined, name = "at"): Date | null {
  if (text === undefined || text === null || text.trim() === "") return null;
  const value = text.trim();
  const m = ISO_8601.exec(value);
  const invalid = () => new InvalidTimeError(`Invalid ${name} ${quoteInput(text)}: ${EXPECTED}`);
  if (!m) throw invalid();
  const [, year, month, day, hour = "0", minute = "0", second = "0"] = m;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (
    Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth ||
    Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59
  ) throw invalid();
  // A bare date is UTC (as Date.parse reads it); with a time, the zone is given.
  const time = Date.parse(m[4] === undefined ? value : value.replace(" ", "T"));
  if (Number.isNaN(time)) throw invalid();
  return new Date(time);
}

/**
 * Checks that the kept history can answer for `at`.
 *
 * @throws {HistoryUnavailableError} (422) when no history is kept, or `at` is before it starts,
 *   saying where it starts; {InvalidTimeError} (400) when `at` is in the future.
 */
export function checkAt(history: History | null | undefined, at: Date, now: Date): void {
  if (at.getTime() > now.getTime()) {
    throw new InvalidTimeError(
      `Invalid at ${at.toISOString()}: it is in the future (now ${now.toISOString()})`,
    );
  }
  if (!history) {
    throw new HistoryUnavailableError(
      `No list history is kept on this server, so at ${at.toISOString()} cannot be answered: it starts with the first data update after IPINTEL_HISTORY_DAYS is above 0 (the default, 365)`,
    );
  }
  if (at.getTime() < history.start.getTime()) {
    throw new HistoryUnavailableError(
      `The list history starts at ${history.start.toISOString()}: at ${at.toISOString()} is before it, so the lists of that time are not known here`,
    );
  }
}
