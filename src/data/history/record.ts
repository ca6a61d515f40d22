/**
 * Recording the history: each data update adds one run, opens an interval for
 * every entry a list gained and closes one for every entry it lost, forgets
 * what left more than the kept days ago, and rewrites the file whole (a new
 * file, then a rename: a kill mid-update loses at most that update's changes).
 *
 * Without a file, the lists as installed now become the first intervals: their
 * `firstSeen` is the time of that update, not when the list first named them.
 */

import { OPTIONS } from "../../base/config.ts";
import { RISK_KINDS, type RiskKind } from "../risk/security.ts";
import {
  decodeHistory,
  emptyHistory,
  encodeHistory,
  HISTORY_FILE,
  type HistoryData,
  isOpen,
  type ListHistory,
} from "./history_file.ts";

/** What a list holds, as the feed parsers give it. */
export interface ListContent {
  readonly networks: readonly string[];
  readonly ranges: readonly (readonly [string, string])[];
  readonly asns: readonly number[];
}

/** One installed list as the update knows it (a manifest entry's fields). */
export interface InstalledList {
  name?: string;
  kind: string;
  provider?: string;
  download?: { file: string; sha256: string };
}

export interface RecordOptions<E extends InstalledList> {
  /** The update's time. */
  at: Date;
  /** Days kept; default IPINTEL_HISTORY_DAYS (365). 0: no history, and the file is removed. */
  days?: number;
  progress?: (line: string) => void;
  /** Writes a file atomically (the manifest's writer: temporary file, sync, rename). */
  write: (path: string, bytes: Uint8Array) => Promise<void>;
  /** A list's entries: parsed from `text()` (its download), or already parsed by the update. */
  parse: (entry: E, text: () => string) => ListContent;
}

/** A list as one run sees it: its kind, its download's hash, and its entries when they are needed. */
export interface ListState {
  kind: RiskKind;
  sha256: string;
  provider?: string;
  content: () => ListContent;
}

/** What one run changed. */
export interface RunChanges {
  entered: number;
  left: number;
}

const SECONDS_PER_DAY = 86_400;

/**
 * Records the installed security lists of `manifest` as one more run in the
 * data directory's history. Never throws: the update has installed its data
 * either way; a history that cannot be written is reported and the next
 * update records the changes (at its own time).
 */
export async function recordHistory<E extends InstalledList>(
  dataDir: string,
  manifest: { readonly sources: readonly E[] },
  options: RecordOptions<E>,
): Promise<void> {
  const progress = options.progress ?? (() => {});
  const path = `${dataDir}/${HISTORY_FILE}`;
  try {
    const days = options.days ?? configuredHistoryDays();
    if (days === 0) {
      await Deno.remove(path).then(
        () => progress("history: off (IPINTEL_HISTORY_DAYS=0): removed the kept history"),
        (error) => {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        },
      );
      return;
    }
    const history = await readHistoryFile(path, progress) ?? emptyHistory(days);
    const lists = new Map<string, ListState>();
    for (const entry of manifest.sources) {
      if (!isHistoryKind(entry.kind) || !entry.download) continue;
      const download = entry.download;
      lists.set(entry.name ?? entry.kind, {
        kind: entry.kind,
        sha256: download.sha256,
        ...(entry.provider ? { provider: entry.provider } : {}),
        content: () =>
          options.parse(entry, () => Deno.readTextFileSync(`${dataDir}/${download.file}`)),
      });
    }
    advanceHistory(history, lists, Math.floor(options.at.getTime() / 1000), days);
    // Quiet when it works: the update's progress is one line per source.
    await options.write(path, encodeHistory(history));
  } catch (error) {
    progress(`history: NOT recorded for this update: ${(error as Error)?.message ?? error}`);
  }
}

/** The kinds whose lists have a history: the security lists (the operator's geofeed has none). */
export function isHistoryKind(kind: string): kind is RiskKind {
  return (RISK_KINDS as readonly string[]).includes(kind);
}

/** IPINTEL_HISTORY_DAYS, read as the configuration reads it (for updates not handed the setting). */
export function configuredHistoryDays(): number {
  const spec = OPTIONS.find((o) => o.key === "historyDays")!;
  const text = Deno.env.get(spec.env);
  return (text ? spec.parse(text, spec.env) : spec.fallback()) as number;
}

/** The file, or null when there is none; an unreadable one is moved aside (named) and started anew. */
async function readHistoryFile(
  path: string,
  progress: (line: string) => void,
): Promise<HistoryData | null> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  try {
    return decodeHistory(bytes, path);
  } catch (error) {
    const aside = `${path}.unreadable-${Date.now()}`;
    await Deno.rename(path, aside);
    progress(`history: ${(error as Error).message}; kept as ${aside}, starting a new history`);
    return null;
  }
}

/**
 * Adds the run at `time` (epoch seconds) to `history` in place: `lists` are
 * the lists installed now. A list whose download is the one last recorded
 * is not read. Then forgets every interval that ended `days` or more before
 * `time`, and the runs no interval needs.
 */
export function advanceHistory(
  history: HistoryData,
  lists: ReadonlyMap<string, ListState>,
  time: number,
  days: number,
): RunChanges {
  const last = history.runs.at(-1);
  // Two updates in one second (or a clock set back) still get distinct, ordered runs.
  const run = history.runs.push(last === undefined ? time : Math.max(time, last + 1)) - 1;
  if (history.runs.length === 1) history.start = history.runs[0]!;
  const changes: RunChanges = { entered: 0, left: 0 };

  for (const [name, state] of lists) {
    let list: ListHistory | undefined = history.lists[name];
    if (list && list.kind !== state.kind) {
      // A list moved to another kind: its past stays under its old kind, named so.
      closeList(list, run, changes);
      history.lists[`${name} (as ${list.kind})`] = list;
      list = undefined;
    }
    list ??= history.lists[name] = { kind: state.kind, installed: [], sha256: "", entries: {} };
    if (state.provider) list.provider = state.provider;
    const wasListed = isOpen(list.installed);
    if (!wasListed) list.installed.push(run);
    if (wasListed && list.sha256 === state.sha256) continue;
    list.sha256 = state.sha256;
    applyContent(list, keysOf(state.content()), run, changes);
  }
  for (const [name, list] of Object.entries(history.lists)) {
    if (!lists.has(name) && isOpen(list.installed)) closeList(list, run, changes);
  }
  history.days = days;
  forget(history, time - days * SECONDS_PER_DAY);
  return changes;
}

/** The entry texts of a list, as its compiled tree names them in `matches`. */
export function keysOf(content: ListContent): Set<string> {
  const keys = new Set(content.networks);
  for (const [first, last] of content.ranges) keys.add(`${first}-${last}`);
  for (const asn of content.asns) keys.add(`AS${asn}`);
  return keys;
}

function applyContent(list: ListHistory, keys: Set<string>, run: number, changes: RunChanges) {
  for (const key of keys) {
    const intervals = list.entries[key];
    if (!intervals) {
      list.entries[key] = [run];
      changes.entered++;
    } else if (!isOpen(intervals)) {
      intervals.push(run);
      changes.entered++;
    }
  }
  for (const [key, intervals] of Object.entries(list.entries)) {
    if (isOpen(intervals) && !keys.has(key)) {
      intervals.push(run);
      changes.left++;
    }
  }
}

/** The list is no longer installed: it and every entry still open end at `run`. */
function closeList(list: ListHistory, run: number, changes: RunChanges) {
  if (isOpen(list.installed)) list.installed.push(run);
  for (const intervals of Object.values(list.entries)) {
    if (isOpen(intervals)) {
      intervals.push(run);
      changes.left++;
    }
  }
  list.sha256 = "";
}

/**
 * Drops the intervals that ended at or before `cutoff` (epoch seconds): an
 * answer for a time from `cutoff` on needs none of them. Of the runs before
 * the one in effect at `cutoff`, only those an entry entered at stay (its
 * `firstSeen`); the indices are renumbered. `start` moves up to the cutoff.
 */
function forget(history: HistoryData, cutoff: number) {
  const { runs } = history;
  const ended = (left: number) => runs[left]! <= cutoff;
  // The run in effect at the cutoff, and every later one, stay: `lastSeen` reads the run
  // before an interval's end, and every end kept is after the cutoff.
  let inEffect = 0;
  while (inEffect + 1 < runs.length && runs[inEffect + 1]! <= cutoff) inEffect++;
  const used = new Set<number>();
  const keep = (intervals: number[]): number[] => {
    let from = 0;
    while (from + 1 < intervals.length && ended(intervals[from + 1]!)) from += 2;
    const kept = from === 0 ? intervals : intervals.slice(from);
    for (let i = 0; i < kept.length && kept[i]! < inEffect; i += 2) used.add(kept[i]!);
    return kept;
  };
  for (const [name, list] of Object.entries(history.lists)) {
    list.installed = keep(list.installed);
    for (const [key, intervals] of Object.entries(list.entries)) {
      const kept = keep(intervals);
      if (kept.length) list.entries[key] = kept;
      else delete list.entries[key];
    }
    if (list.installed.length === 0) delete history.lists[name];
  }
  history.start = Math.max(history.start, cutoff);
  if (used.size === inEffect) return; // every earlier run is still needed
  const renumbered = new Map<number, number>();
  const keptRuns: number[] = [];
  runs.forEach((time, i) => {
    if (i >= inEffect || used.has(i)) {
      renumbered.set(i, keptRuns.length);
      keptRuns.push(time);
    }
  });
  history.runs = keptRuns;
  const renumber = (intervals: number[]) => {
    for (let i = 0; i < intervals.length; i++) intervals[i] = renumbered.get(intervals[i]!)!;
  };
  for (const list of Object.values(history.lists)) {
    renumber(list.installed);
    Object.values(list.entries).forEach(renumber);
  }
}
