/**
 * Travel as written in a record: CSV/TSV cells (`<prefix>travel_km`,
 * `<prefix>travel_kmh`, `<prefix>impossible_travel`) or JSON members under the
 * answer's key (`travel_km`, `travel_kmh`, `impossible_travel`), empty (null)
 * for a subject's first record or one that cannot be judged.
 *
 * A subject's records may be answered by different workers, but its state
 * must follow input order: so a record's travel is written as a mark holding
 * its point, and the run's engine (in the main isolate, which writes the
 * answers in input order) judges the marks, one batch after the other
 * (fillTravel). The mark is a lone surrogate (U+DFFF) on either side of the
 * point's JSON: decoded input (TextDecoder) is well-formed and JSON.stringify
 * escapes lone surrogates, so no other text holds one.
 */

import type { LookupResult } from "../../base/types.ts";
import type { TimeRead } from "./time_forms.ts";
import { countryNumber, type TravelJudge, type TravelPoint, type TravelVerdict } from "./travel.ts";

/** What `--travel-key`, `--travel-speed` and `--travel-subjects` say. */
export interface TravelOptions {
  /** The subject's column (CSV/TSV) or dotted field path (NDJSON). */
  key: string;
  /** Faster than this (km/h, after the accuracy radii) is impossible. */
  speedKmh: number;
  /** Subjects remembered at most. */
  subjects: number;
}

export type { TravelCounts } from "./travel.ts";

/** The added fields' names (CSV columns after the prefix; JSON keys as they are). */
export const TRAVEL_FIELDS = ["travel_km", "travel_kmh", "impossible_travel"] as const;

/** Where the fields go: CSV/TSV cells after this delimiter, or JSON members (null). */
export interface TravelShape {
  delimiter: string | null;
}

const MARK = "\uDFFF";

/** A record's travel fields as written (a verdict, or a mark the run's engine fills), and why empty. */
export interface TravelPart {
  text: string;
  note: string | null;
}

/**
 * A record's travel fields: a mark to judge when it has a subject (`subject`, from the key
 * `key`), a time and coordinates; else empty, with the reason (a record without a result
 * failed: its own error says why).
 */
export function travelPart(
  result: LookupResult | null,
  time: TimeRead | null,
  subject: string | null,
  key: string,
  shape: TravelShape,
): TravelPart {
  const empty = (note: string | null) => ({ text: travelText(null, shape), note });
  if (result === null) return empty(null);
  const name = subject?.trim() ?? "";
  if (name === "") return empty(`No travel: no ${key} in this record`);
  if (!(time instanceof Date)) return empty("No travel: no time that can be read");
  const { latitude, longitude, accuracy_radius, countryCode, city } = result.geoLocation;
  if (latitude === null || longitude === null) {
    return empty(`No travel: no coordinates for ${result.ip}`);
  }
  const point = {
    subject: name,
    time: time.getTime(),
    latitude,
    longitude,
    radiusKm: accuracy_radius ?? 0,
    country: countryNumber(countryCode),
    countryOnly: city === null,
  };
  return { text: markTravel(point), note: null };
}

/** The mark of a record to judge in input order (see the module comment). */
export function markTravel(point: TravelPoint): string {
  const { subject, time, latitude, longitude, radiusKm, country, countryOnly } = point;
  return MARK +
    JSON.stringify([subject, time, latitude, longitude, radiusKm, country, countryOnly]) + MARK;
}

/** The fields of `verdict` (null: empty) in `shape`: CSV cells each after the delimiter, or JSON members. */
export function travelText(verdict: TravelVerdict | null, shape: TravelShape): string {
  const d = shape.delimiter;
  if (d !== null) {
    return verdict === null
      ? d + d + d
      : `${d}${verdict.km}${d}${verdict.kmh}${d}${verdict.impossible}`;
  }
  return verdict === null
    ? NO_TRAVEL
    : `"travel_km":${verdict.km},"travel_kmh":${verdict.kmh},"impossible_travel":${verdict.impossible}`;
}

/** The JSON members of a record without travel. */
export const NO_TRAVEL = '"travel_km":null,"travel_kmh":null,"impossible_travel":null';

/** `text` with each mark replaced by its record's judged fields, in order. */
export function fillTravel(text: string, judge: TravelJudge, shape: TravelShape): string {
  if (!text.includes(MARK)) return text;
  const parts = text.split(MARK);
  if (parts.length % 2 === 0) throw new Error("enrich: an unclosed travel mark in an answer");
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const [subject, time, latitude, longitude, radiusKm, country, countryOnly] = JSON.parse(
      parts[i]!,
    ) as [string, number, number, number, number, number, boolean];
    const verdict = judge.next({
      subject,
      time,
      latitude,
      longitude,
      radiusKm,
      country,
      countryOnly,
    });
    out += travelText(verdict, shape) + parts[i + 1]!;
  }
  return out;
}
