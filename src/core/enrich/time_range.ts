/**
 * Whether a time read field by field names a real instant: `Date.UTC` rolls
 * `32 Feb 25:61:61` over into March instead of refusing it, so each part is
 * checked before the parts are added up. Shared by enrich's time forms.
 *
 * Second 60 is refused: a log's time comes from the POSIX clock (nginx's and
 * Apache's `%t` are strftime of `time_t`), which repeats a second at a leap
 * second and never shows `:60`; `at` (src/data/history/at.ts) refuses it too.
 */

/** The widest UTC offset in use (Kiribati's +14:00; the most western is -12:00). */
export const MAX_OFFSET_MINUTES = 14 * 60;

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

/** Days in `month` (1-12) of `year`, leap years (Gregorian) included. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Null when the parts name a real time, else why not (for the record's error).
 *
 * @param month 1 to 12
 * @param offsetMinutes the zone's offset from UTC, east positive (`+0130` is 90)
 * @example validDateTime(2026, 2, 29, 0, 0, 0, 0) // "February 2026 has 28 days, not 29"
 */
export function validDateTime(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  offsetMinutes = 0,
): string | null {
  if (!Number.isInteger(month) || month < 1 || month > 12) return `no month ${month}`;
  const days = daysInMonth(year, month);
  if (!Number.isInteger(day) || day < 1 || day > days) {
    return `${MONTH_NAMES[month - 1]} ${year} has ${days} days, not ${day}`;
  }
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) return `hour ${hour} is not 00 to 23`;
  if (!Number.isInteger(minute) || minute < 0 || minute > 59) {
    return `minute ${minute} is not 00 to 59`;
  }
  if (!(second >= 0 && second < 60)) return `second ${second} is not 00 to 59`;
  if (!Number.isInteger(offsetMinutes) || Math.abs(offsetMinutes) > MAX_OFFSET_MINUTES) {
    return `zone offset ${offsetText(offsetMinutes)} is beyond ±14:00`;
  }
  return null;
}

/**
 * Null when `+HHMM` (or `+HH:MM`) parts are a zone offset within ±14:00 with minutes
 * under 60, else why not.
 */
export function validOffset(hours: number, minutes: number): string | null {
  if (minutes > 59) return `zone minutes ${minutes} are not 00 to 59`;
  if (hours * 60 + minutes > MAX_OFFSET_MINUTES) {
    return `zone offset ${String(hours).padStart(2, "0")}:${
      String(minutes).padStart(2, "0")
    } is beyond ±14:00`;
  }
  return null;
}

function offsetText(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${
    String(abs % 60).padStart(2, "0")
  }`;
}
