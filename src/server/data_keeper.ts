/**
 * The server's background data work, never in the way of serving:
 * - a configured database missing from the data directory (an interrupted
 *   first build, a source added to the sources file) is built at start;
 * - a data directory without its feeds gets them right after the server
 *   listens, and every source is updated each IPINTEL_UPDATE_INTERVAL
 *   (daily by default; `off` turns both off);
 * - a run that fails (offline, a publisher down, another writer holding the
 *   data directory) is retried with back-off: 1 min, doubling, at most 1 h
 *   and never later than the next scheduled run.
 * New data reaches the server through the manifest watch (hot reload); failures
 * are in the manifest, so /status says which source failed and why.
 */

import type { Config } from "../config.ts";
import type { DataSet } from "../sources/data_set.ts";
import { DATABASE_KINDS } from "../sources/manifest.ts";
import { sleep } from "../sleep.ts";

/** What the keeper runs: `data` (missing databases) and `data update` (every source). */
export interface DataJobs {
  /** Exit code: 0 when every source is installed. */
  buildMissing(signal: AbortSignal): Promise<number>;
  updateAll(signal: AbortSignal): Promise<number>;
}

const FIRST_BACKOFF_S = 60;
const LONGEST_BACKOFF_S = 3600;

/** Runs until `signal` aborts; resolves once the run under way has stopped. */
export async function keepData(
  config: Config,
  loaded: DataSet,
  jobs: DataJobs,
  signal: AbortSignal,
  log: (line: string) => void = console.error,
): Promise<void> {
  const interval = config.updateInterval;
  const isDatabase = (kind: string) => (DATABASE_KINDS as readonly string[]).includes(kind);
  let missingDatabases = loaded.absent.some((s) => isDatabase(s.kind));
  const missingFeeds = loaded.absent.some((s) => !isDatabase(s.kind));
  // Work to do now: a database to complete, or (with updates on) feeds to fetch.
  let due = missingDatabases || (interval > 0 && missingFeeds) ? 0 : interval;
  let backoff = FIRST_BACKOFF_S;
  while (!signal.aborted && (due > 0 || missingDatabases || interval > 0)) {
    await sleep(due * 1000, signal);
    if (signal.aborted) return;
    let ok = true;
    try {
      if (missingDatabases) {
        log("data: completing the missing databases in the background");
        ok = (await jobs.buildMissing(signal)) === 0;
        missingDatabases = !ok;
      }
      if (ok && interval > 0) ok = (await jobs.updateAll(signal)) === 0;
    } catch (error) {
      if (signal.aborted) return;
      ok = false;
      log(`update: ${error instanceof Error ? error.message : error}`);
    }
    if (ok) {
      backoff = FIRST_BACKOFF_S;
      due = interval;
    } else {
      due = interval > 0 ? Math.min(backoff, interval) : backoff;
      log(`update: trying again in ${due} s`);
      backoff = Math.min(backoff * 2, LONGEST_BACKOFF_S);
    }
    if (due === 0) return; // updates off and nothing missing
  }
}
