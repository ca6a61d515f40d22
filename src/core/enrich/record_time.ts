/**
 * When a record was written, as enrich reads it: ISO 8601 (`2026-10-10T13:55:36Z`,
 * with a zone, or a date), epoch seconds (`1791640536`, fractions allowed), or
 * an access log's own `[10/Oct/2026:13:55:36 +0000]`. A log repeats its times,
 * so the last text read is remembered.
 */

import { parseAt } from "../../data/history/at.ts";
import { validDateTime, validOffset } from "./time_range.ts";

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

/** `10/Oct/2026:13:55:36 +0000` (nginx's and Apache's `%t`, without the brackets). */
const CLF = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;
/** Epoch seconds: 9 to 11 digits (2001 to 5138), optional fraction. */
const EPOCH = /^\d{9,11}(\.\d+)?$/;

/** A record's time parser: text in, the time or why it is not one. */
export type TimeReader = (text: string) => Date | string;

/** Makes a parser that remembers the last text it read (logs repeat their seconds). */
export function createTimeReader(): TimeReader {
  let lastText = "";
  let last: Date | string = "";
  return (text) => {
    if (text === lastText) return last;
    lastText = text;
    return last = readTime(text.trim());
  };
}

function readTime(text: string): Date | string {
  if (text === "") return "no time";
  if (EPOCH.test(text)) return new Date(Number(text) * 1000);
  const clf = CLF.exec(text);
  if (clf) {
    const [, day, month, year, hour, minute, second, sign, zoneHours, zoneMinutes] = clf;
    const monthIndex = MONTHS[month!];
    if (monthIndex === undefined) return `invalid time ${JSON.stringify(text)}`;
    const offset = (Number(zoneHours) * 60 + Number(zoneMinutes)) * (sign === "-" ? -1 : 1);
    // Checked part by part: Date.UTC would roll 32/Feb 25:61:61 over into March.
    const wrong = validOffset(Number(zoneHours), Number(zoneMinutes)) ??
      validDateTime(
        Number(year),
        monthIndex + 1,
        Number(day),
        Number(hour),
        Number(minute),
        Number(second),
        offset,
      );
    if (wrong !== null) return `invalid time ${JSON.stringify(text)}: ${wrong}`;
    const utc = Date.UTC(
      Number(year),
      monthIndex,
      Number(day),
      Number(hour),
      Number(minute),
      Number(second),
    );
    return new Date(utc - offset * 60_000);
  }
  try {
    return parseAt(text, "time") ?? "no time";
  } catch (error) {
    return (error as Error).message;
  }
}
