/**
 * When a record was written, as enrich reads it (the forms: time_forms.ts).
 * A log repeats its times, so the last text read is remembered.
 */

import { createTimeForms, type TimeRead } from "./time_forms.ts";

/** A record's time parser: text in, the time or why it is not one. */
export type TimeReader = (text: string) => TimeRead;

/** Why a record has no time: its time is empty or absent. */
export const NO_TIME = "No time in this record";

/** Why an access-log line has no time: no `[...]` in it (counted as NO_TIME is). */
export const NO_LOG_TIME = "No [time] in this line";

/**
 * Makes a parser that remembers the last text it read (logs repeat their seconds);
 * `zone` for times written without one (an IANA name that passed checkTimeZone; null: UTC).
 */
export function createTimeReader(zone: string | null = null): TimeReader {
  const read = createTimeForms(zone);
  let lastText = "";
  let last: TimeRead = NO_TIME;
  return (text) => {
    if (text === lastText) return last;
    lastText = text;
    const trimmed = text.trim();
    return last = trimmed === "" ? NO_TIME : read(trimmed);
  };
}
