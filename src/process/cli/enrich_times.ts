/**
 * `ipintel enrich`'s time and travel options (`--at`, `--time-zone`,
 * `--travel-key`, `--travel-speed`, `--travel-subjects`) read and checked, and
 * the summary's words for what they did: records answered in part, travel.
 */

import { type FlagTable, UsageError } from "../../base/config.ts";
import type { EnrichCounts } from "../../core/enrich/enricher.ts";
import { createTimeForms } from "../../core/enrich/time_forms.ts";
import { checkTimeZone } from "../../core/enrich/time_zone.ts";
import {
  DEFAULT_TRAVEL_SPEED,
  DEFAULT_TRAVEL_SUBJECTS,
  type TravelCounts,
} from "../../core/enrich/travel.ts";
import type { TravelOptions } from "../../core/enrich/travel_fields.ts";

export const TIME_FLAGS = {
  "time-zone": {
    type: "string",
    placeholder: "<zone>",
    description: "The IANA zone of record times written without one (default UTC)",
  },
  "travel-key": {
    type: "string",
    placeholder: "<column|path>",
    description:
      "Impossible travel: the subject's column (CSV/TSV) or field (NDJSON); adds travel_km, " +
      "travel_kmh and impossible_travel from the subject's previous record",
  },
  "travel-speed": {
    type: "string",
    placeholder: "<km/h>",
    description:
      `Impossible travel: faster than this is impossible (default ${DEFAULT_TRAVEL_SPEED})`,
  },
  "travel-subjects": {
    type: "string",
    placeholder: "<n>",
    description:
      `Impossible travel: subjects remembered, least recently seen forgotten first (default ${DEFAULT_TRAVEL_SUBJECTS})`,
  },
} as const satisfies FlagTable;

/** The time options as the engine takes them. */
export interface TimeOptions {
  at: Date | null;
  timeZone: string | null;
  travel: TravelOptions | null;
}

/** Reads and checks the time options (a UsageError naming the flag and value otherwise). */
export function timeOptions(
  flags: {
    at?: string;
    "time-zone"?: string;
    "time-column"?: string;
    "time-field"?: string;
    "travel-key"?: string;
    "travel-speed"?: string;
    "travel-subjects"?: string;
  },
  now: Date,
): TimeOptions {
  let timeZone: string | null = null;
  if (flags["time-zone"] !== undefined) {
    const zone = checkTimeZone(flags["time-zone"]);
    if (zone instanceof Error) throw new UsageError(zone.message);
    timeZone = zone;
  }
  let at: Date | null = null;
  if (flags.at !== undefined && flags.at.trim() !== "") {
    const read = createTimeForms(timeZone)(flags.at.trim());
    if (typeof read === "string") throw new UsageError(`--at: ${read}`);
    if (read.getTime() > now.getTime()) {
      throw new UsageError(
        `--at ${JSON.stringify(flags.at)} is in the future (now ${now.toISOString()})`,
      );
    }
    at = read;
  }
  const key = flags["travel-key"]?.trim();
  if (key === undefined || key === "") {
    for (const name of ["travel-speed", "travel-subjects"] as const) {
      if (flags[name] !== undefined) throw new UsageError(`--${name} needs --travel-key`);
    }
    if (key === "") throw new UsageError("--travel-key needs a column or field name");
    return { at, timeZone, travel: null };
  }
  if (flags["time-column"] === undefined && flags["time-field"] === undefined) {
    throw new UsageError(
      "--travel-key needs each record's time: name it with --time-column (CSV/TSV) or --time-field (NDJSON)",
    );
  }
  const speed = positive(flags["travel-speed"], "--travel-speed", DEFAULT_TRAVEL_SPEED, false);
  const subjects = positive(
    flags["travel-subjects"],
    "--travel-subjects",
    DEFAULT_TRAVEL_SUBJECTS,
    true,
  );
  return { at, timeZone, travel: { key, speedKmh: speed, subjects } };
}

function positive(
  text: string | undefined,
  name: string,
  fallback: number,
  integer: boolean,
): number {
  if (text === undefined) return fallback;
  const value = Number(text.trim().replaceAll("_", ""));
  if (
    text.trim() === "" || !Number.isFinite(value) || value <= 0 ||
    (integer && !Number.isInteger(value))
  ) {
    throw new UsageError(
      `Invalid ${name} ${JSON.stringify(text)}: expected a ${
        integer ? "whole " : ""
      }number above 0`,
    );
  }
  return value;
}

/** The summary's words for records answered in part: `` (none) or ` (12 without …)`. */
export function partialWords(counts: EnrichCounts): string {
  const reasons = Object.entries(counts.partial);
  if (reasons.length === 0) return "";
  const total = reasons.reduce((sum, [, n]) => sum + n, 0);
  return ` (${total} without security and risk: ${
    reasons.map(([reason, n]) => `${reason}: ${n}`).join(", ")
  })`;
}

/** The summary's line on travel. */
export function travelLine(counts: TravelCounts, speedKmh: number): string {
  return `ipintel enrich: travel: ${counts.judged} records judged, ${counts.impossible} impossible ` +
    `(over ${speedKmh} km/h); ${counts.subjects} subjects remembered, ${counts.forgotten} forgotten ` +
    `(at most ${counts.limit})`;
}
