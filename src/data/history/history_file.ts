/**
 * `history.json.gz` in the data directory: when each network entered and left
 * each security list, as intervals over the updates that recorded them.
 *
 * Times are kept once, in `runs` (the updates, epoch seconds, oldest first);
 * an interval is a pair of indices into it: the update that first listed the
 * entry and the first update that no longer did. A list's `entries` map each
 * entry (its text as the list gives it: `1.2.3.4`, `10.0.0.0/8`, `a-b` for a
 * range, `AS13335`) to those indices flattened, `[entered, left, entered, ...]`:
 * an odd length means it is still listed. A network that stays costs nothing
 * per update; only changes add numbers.
 */

import { gunzipSync, gzipSync } from "node:zlib";
import { RISK_KINDS, type RiskKind } from "../risk/security.ts";

/** The file's name in the data directory, beside `manifest.json`. */
export const HISTORY_FILE = "history.json.gz";

/** What the file says it is, so another JSON file is never taken for it. */
const FORMAT = "ipintel-list-history";
const VERSION = 1;

/** One list's history. */
export interface ListHistory {
  kind: RiskKind;
  /** When the list itself was installed: run indices, entered/left flattened like an entry's. */
  installed: number[];
  /** The sha256 of the download last recorded: an update that kept it changes nothing. */
  sha256: string;
  /** Hosting and relay lists: the provider the sources file names. */
  provider?: string;
  /** Each entry ever listed (within the kept days): its intervals, flattened. */
  entries: Record<string, number[]>;
}

export interface HistoryData {
  format: typeof FORMAT;
  version: typeof VERSION;
  /** Epoch seconds from which an `at` answer is complete: the first update, or the kept days' start. */
  start: number;
  /** The days kept when the file was written. */
  days: number;
  /** Epoch seconds of each recorded update, oldest first: what the intervals index. */
  runs: number[];
  lists: Record<string, ListHistory>;
}

/** A history no update has recorded yet. */
export function emptyHistory(days: number): HistoryData {
  return { format: FORMAT, version: VERSION, start: 0, days, runs: [], lists: {} };
}

/** The file's bytes: compact JSON, gzipped. */
export function encodeHistory(history: HistoryData): Uint8Array {
  return gzipSync(new TextEncoder().encode(JSON.stringify(history)), { level: 9 });
}

/** Reads the file's bytes back; throws an Error saying what is wrong with them. */
export function decodeHistory(bytes: Uint8Array, label: string): HistoryData {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(gunzipSync(bytes)));
  } catch (error) {
    throw new Error(`${label}: not a gzipped JSON file (${(error as Error).message})`);
  }
  const problem = checkHistory(json);
  if (problem) throw new Error(`${label}: ${problem}`);
  return json as HistoryData;
}

/** Why `json` is not a history file (null when it is one). */
function checkHistory(json: unknown): string | null {
  const h = json as Partial<HistoryData> | null;
  if (typeof h !== "object" || h === null || h.format !== FORMAT) {
    return `not an ${FORMAT} file`;
  }
  if (h.version !== VERSION) return `version ${h.version} is not ${VERSION}`;
  if (!Number.isInteger(h.start) || !Number.isInteger(h.days) || h.days! < 0) {
    return "start and days must be whole numbers";
  }
  const runs = h.runs;
  if (
    !Array.isArray(runs) || runs.some((t, i) => !Number.isInteger(t) || t <= (runs[i - 1] ?? -1))
  ) {
    return "runs must be increasing whole numbers of seconds";
  }
  if (runs.length === 0) return "no update is recorded";
  if (typeof h.lists !== "object" || h.lists === null || Array.isArray(h.lists)) {
    return "lists must be an object";
  }
  const validIntervals = (v: unknown) =>
    Array.isArray(v) && v.length > 0 &&
    v.every((i, n) => Number.isInteger(i) && i >= 0 && i < runs.length && i > (v[n - 1] ?? -1));
  for (const [name, list] of Object.entries(h.lists)) {
    if (
      typeof list !== "object" || list === null || !RISK_KINDS.includes(list.kind) ||
      typeof list.sha256 !== "string" || !Array.isArray(list.installed) ||
      (list.installed.length > 0 && !validIntervals(list.installed)) ||
      typeof list.entries !== "object" || list.entries === null
    ) {
      return `list ${JSON.stringify(name)} is malformed`;
    }
    for (const [entry, intervals] of Object.entries(list.entries)) {
      if (!validIntervals(intervals)) {
        return `list ${JSON.stringify(name)} entry ${JSON.stringify(entry)}: bad intervals`;
      }
    }
  }
  return null;
}

/** True while an entry (or a list) flattened as `intervals` is listed at run index `run`. */
export function listedAt(intervals: readonly number[], run: number): boolean {
  // The last index not after `run` decides: an "entered" (even position) means listed.
  let lo = 0;
  let hi = intervals.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (intervals[mid]! <= run) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== -1 && found % 2 === 0;
}

/** True while the flattened intervals are open: the entry is listed at the last update. */
export function isOpen(intervals: readonly number[]): boolean {
  return intervals.length % 2 === 1;
}
