/**
 * The server's background data work, never in the way of serving:
 * - a configured database missing from the data directory (an interrupted
 *   first build, a source added to the sources file) is built at start;
 * - a data directory without its feeds gets them right after the server
 *   listens, and every source is updated each IPINTEL_UPDATE_INTERVAL
 *   (daily by default; `off` turns both off);
 * - a run that fails (offline, a publisher down) is retried with back-off:
 *   1 min, doubling, never later than the next scheduled run (so a closed
 *   network costs a few retries, then one attempt per interval);
 * - a data directory this process cannot write is said once (and shown in
 *   the status): the server serves what is installed and looks again at the
 *   next scheduled run, without retrying in between.
 * Each scheduled update says one line: its counts, where the failed sources
 * come from (each host once) and when it tries again; the update's own lines
 * per source are for `data update` on the command line.
 * New data reaches the server through the manifest watch (hot reload); failures
 * are in the manifest, so /status says which source failed and why.
 */

import type { Config } from "../../base/config.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import {
  DATABASE_KINDS,
  type Manifest,
  type ManifestEntry,
  readManifest,
} from "../../data/sources/manifest.ts";
import {
  isFileUrl,
  readSourcesFile,
  type SourcesFile,
  type SourceSpec,
} from "../../data/sources/sources_file.ts";
import { sleep as realSleep } from "../../base/sleep.ts";
import { dataDirWriteProblem } from "./data_dir.ts";

/** What the keeper runs: `data` (missing databases) and `data update` (every source). */
export interface DataJobs {
  /** Exit code: 0 when every source is installed. */
  buildMissing(signal: AbortSignal): Promise<number>;
  updateAll(signal: AbortSignal): Promise<number>;
}

/** The keeper's state, for /status (it changes as the keeper runs). */
export interface DataKeeperStatus {
  /**
   * Why the data directory cannot be written (e.g. "the data directory
   * /srv/data is read-only: …"), or null. The server still serves the data
   * it has; updates wait until this clears.
   */
  readOnly: string | null;
  /** An update or build is running now. */
  updating: boolean;
  /** ISO 8601 time of the next scheduled run; null when none is scheduled. */
  nextRun: string | null;
}

export interface KeeperOptions {
  log?: (line: string) => void;
  /** Updated as the keeper runs; read by /status. */
  status?: DataKeeperStatus;
  /** Waits `ms` or until the signal aborts (tests pass a clock of their own). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Why the data directory cannot be written, or null (default: a probe file). */
  writeProblem?: (dataDir: string) => Promise<string | null>;
  /**
   * The manifest as it is now (default: read from the data directory), or null:
   * read before and after an update, to say what it did.
   */
  manifest?: (dataDir: string) => Promise<Manifest | null>;
  /** The sources file at `path` (the one the update installed), or null: where failures come from. */
  sources?: (path: string) => Promise<SourcesFile | null>;
  now?: () => number;
}

/** A status before the keeper runs. */
export function newKeeperStatus(): DataKeeperStatus {
  return { readOnly: null, updating: false, nextRun: null };
}

const FIRST_BACKOFF_S = 60;
/** With the schedule off (only a missing database to complete), the longest back-off. */
const LONGEST_BACKOFF_S = 3600;

/** Runs until `signal` aborts; resolves once the run under way has stopped. */
export async function keepData(
  config: Config,
  loaded: DataSet,
  jobs: DataJobs,
  signal: AbortSignal,
  options: KeeperOptions = {},
): Promise<void> {
  const log = options.log ?? console.error;
  const status = options.status ?? newKeeperStatus();
  const sleep = options.sleep ?? realSleep;
  const writeProblem = options.writeProblem ?? dataDirWriteProblem;
  const now = options.now ?? Date.now;
  const manifestNow = options.manifest ??
    ((dir: string) => readManifest(dir).catch(() => null));
  const sources = options.sources ??
    ((path: string) => readSourcesFile(path).catch(() => null));
  const interval = config.updateInterval;
  const isDatabase = (kind: string) => (DATABASE_KINDS as readonly string[]).includes(kind);
  let missingDatabases = loaded.absent.some((s) => isDatabase(s.kind));
  const missingFeeds = loaded.absent.some((s) => !isDatabase(s.kind));
  // Work to do now: a database to complete, or (with updates on) feeds to fetch.
  let due = missingDatabases || (interval > 0 && missingFeeds) ? 0 : interval;
  let backoff = FIRST_BACKOFF_S;
  while (!signal.aborted && (due > 0 || missingDatabases || interval > 0)) {
    status.nextRun = new Date(now() + due * 1000).toISOString();
    await sleep(due * 1000, signal);
    if (signal.aborted) return;
    const problem = await writeProblem(config.dataDir);
    if (problem !== status.readOnly) {
      // Said once when it starts, once when it ends: never a line per retry.
      if (problem) {
        log(
          `update: ${problem}; serving the installed data${
            interval > 0 ? `, looking again in ${interval} s (IPINTEL_UPDATE_INTERVAL)` : ""
          }`,
        );
      } else log(`update: the data directory ${config.dataDir} can be written again`);
      status.readOnly = problem;
    }
    if (problem) {
      if (interval === 0) break; // nothing scheduled: nothing will make it writable for us
      due = interval;
      continue;
    }
    let ok = true;
    /** This run's line: the update's summary, or why the run failed. */
    let said: string | null = null;
    status.updating = true;
    try {
      if (missingDatabases) {
        log("data: completing the missing databases in the background");
        ok = (await jobs.buildMissing(signal)) === 0;
        missingDatabases = !ok;
      }
      if (ok && interval > 0) {
        const before = await manifestNow(config.dataDir);
        const started = now();
        const code = await jobs.updateAll(signal);
        ok = code === 0;
        const after = await manifestNow(config.dataDir);
        const file = await sources(after?.sourcesFile?.path ?? config.sourcesFile);
        said = after && updateLine(before, after, file, config.registry, now() - started);
      }
    } catch (error) {
      if (signal.aborted) return;
      ok = false;
      said = `update: ${error instanceof Error ? error.message : error}`;
    } finally {
      status.updating = false;
    }
    if (ok) {
      backoff = FIRST_BACKOFF_S;
      due = interval;
      if (said) log(said);
    } else {
      // Doubling up to the interval: a closed network soon costs one attempt per interval.
      due = interval > 0 ? Math.min(backoff, interval) : Math.min(backoff, LONGEST_BACKOFF_S);
      log(said ? `${said}; trying again in ${due} s` : `update: trying again in ${due} s`);
      backoff *= 2;
    }
    if (due === 0) break; // updates off and nothing missing
  }
  status.nextRun = null;
}

/**
 * One update's line, from the manifest before and after it: how many of its
 * sources it updated (their entries were built again), left unchanged, or
 * failed (their failure is new), how long it took, and where the failed ones
 * come from, each once.
 */
export function updateLine(
  before: Manifest | null,
  after: Manifest,
  file: SourcesFile | null,
  registry: string,
  ms: number,
): string {
  const names = file?.sources.map((s) => s.name) ??
    after.sourcesFile?.sources.map((s) => s.name) ?? [];
  const entry = (m: Manifest | null, name: string): ManifestEntry | undefined =>
    m?.sources.find((e) => (e.name ?? e.kind) === name);
  const failed = names.filter((name) => {
    const failure = after.failures?.[name];
    return failure !== undefined && failure.at !== before?.failures?.[name]?.at;
  });
  const updated = names.filter((name) => {
    const now = entry(after, name);
    return now !== undefined && !failed.includes(name) && now.built !== entry(before, name)?.built;
  });
  const from = new Set(
    failed.map((name) => {
      const spec = file?.sources.find((s) => s.name === name);
      return spec ? origin(spec, registry) : name;
    }),
  );
  const unchanged = names.length - updated.length - failed.length;
  return `update: ${updated.length} updated, ${unchanged} unchanged, ${failed.length} failed (${
    (ms / 1000).toFixed(1)
  } s)${failed.length ? `; failed: ${[...from].join(", ")} (details at /status)` : ""}`;
}

/** Where a source comes from, for a log line: a URL's host, the npm registry's, a file's path. */
function origin(spec: SourceSpec, registry: string): string {
  try {
    if (isFileUrl(spec.url)) return decodeURIComponent(new URL(spec.url).pathname);
    return new URL(spec.format === "npm" ? registry : spec.url).host;
  } catch {
    return spec.name;
  }
}
