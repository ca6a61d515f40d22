/** `ipintel serve`: loads the data (building it on first run) and serves the HTTP API. */

import { resolve } from "node:path";
import { rateTableBuffer } from "../../service/keys_limits/rate_table.ts";
import { type Config, isEmbeddedData } from "../../base/config.ts";
import { LogSink } from "../../service/ops/log_sink.ts";
import { type Metrics, sharedCountsBuffer } from "../../service/ops/metrics.ts";
import { type DataSet, VerifiedFileCache } from "../../data/sources/data_set.ts";
import { readManifest, serverSourcesFile, updateCommand } from "../../data/sources/manifest.ts";
import { readSourcesFile } from "../../data/sources/sources_file.ts";
import { defineCommand } from "./command.ts";
import { runDataJobInWorker } from "./data_in_worker.ts";
import { type DataKeeperStatus, keepData, newKeeperStatus } from "../server/data_keeper.ts";
import { dataDirWriteProblem } from "../server/data_dir.ts";
import { guardUncaughtErrors } from "../server/error_guard.ts";
import { startInstance } from "../server/instance.ts";
import { type ReloadTarget, startHotReload } from "../server/reload.ts";
import {
  createSharedParts,
  type Handoff,
  openServedData,
  openSharedData,
  servedFor,
} from "../server/served.ts";
import { StopRequest } from "../server/shutdown.ts";
import { WorkerPool } from "../server/worker_pool.ts";
import { decisionCountsBuffer } from "../../service/policy/counter.ts";
import { policyWarnings } from "../../service/policy/warnings.ts";

export const serveCommand = defineCommand({
  summary: "Serve the HTTP API (builds the default data on first run)",
  run: ({ config }) => runServe(config),
});

/**
 * Serves until SIGTERM or SIGINT, then stops accepting, lets the requests in
 * flight finish (up to IPINTEL_SHUTDOWN_TIMEOUT), writes the pending rate
 * counts to the KV, closes it and returns 0. A data set that fails to load
 * stops the server the same way, then throws.
 *
 * With IPINTEL_WORKERS = N > 1, this isolate and N - 1 workers serve on one
 * port (reusePort: the kernel spreads connections over them). This one reads
 * and verifies each data set once, into shared memory that every isolate
 * reads, and runs the hot reload, the scheduled updates and the shutdown for
 * all. Each isolate counts its metrics in its own slice of one shared buffer,
 * so `/metrics` has the totals whichever isolate answers it.
 */
export async function runServe(config: Config): Promise<number> {
  // What goes wrong before the server (and its metrics) exists is logged, not counted.
  const counted: { metrics: Metrics | null } = { metrics: null };
  const unguard = guardUncaughtErrors(() => counted.metrics?.recordUncaughtError());
  try {
    return await serve(config, counted);
  } finally {
    unguard();
  }
}

async function serve(config: Config, counted: { metrics: Metrics | null }): Promise<number> {
  // A bad sources file stops the start here, before anything listens: exit 2, one line
  // naming the file, the entry and the field.
  await readSourcesFile(config.sourcesFile);
  const workers = config.httpServer === "deno" ? config.workers - 1 : 0;
  const stop = new StopRequest();
  const log = new LogSink({ onDrop: (lines) => counted.metrics?.recordLogDropped(lines) });
  const writeLog = log.write;
  const counts = workers > 0 ? sharedCountsBuffer(workers + 1) : undefined;
  // One rate table for every isolate: one server admits exactly its limits.
  const rateTable = rateTableBuffer();
  // Forward-auth decisions, counted by every isolate in one buffer (src/service/policy/counter.ts).
  const policyCounts = config.policy
    ? { buffer: decisionCountsBuffer(workers + 1), isolates: workers + 1 }
    : undefined;
  const instance = await startInstance(config, {
    writeLog,
    reusePort: workers > 0,
    sharedCounts: counts && { buffer: counts, slice: workers },
    rateTable,
    policyCounts: policyCounts && { ...policyCounts, slice: workers },
    label: workers > 0 ? `${workers + 1} workers` : undefined,
  });
  const server = instance.server;
  counted.metrics = server.metrics;
  stop.requested.then(() => instance.markStopping());
  const pool = counts ? new WorkerPool(config, counts, writeLog, rateTable, policyCounts) : null;
  pool?.failed.then((message) => {
    console.error(`ipintel: ${message}`);
    stop.request("a worker failed");
  });
  // The workers start while the data loads; a set is handed over once they listen.
  const started = pool?.start(workers, instance.port);
  started?.catch(() => {}); // a worker that fails to start stops the server (pool.failed)
  // Warmed between requests: the server answers as soon as it has data.
  const shared = createSharedParts("background");
  // Rules no installed list can answer are said once, with the first data set.
  let policyChecked = false;
  // The background updates' state (a read-only data directory, the next run), for /status.
  const keeperStatus = newKeeperStatus();
  // A reload reads and hashes again only the files that changed.
  const verifiedFiles = new VerifiedFileCache();
  const data = serveData(config, stop, keeperStatus, {
    load: async () =>
      pool
        ? await openSharedData(config, verifiedFiles)
        : { data: await openServedData(config, { verifiedFiles }), handoff: null },
    // All isolates switch, or none: the workers open the set first (without reading a file).
    install: async ({ data, handoff }) => {
      await started;
      if (pool && handoff) await pool.prepare(handoff);
      server.install(servedFor(data, shared));
      await pool?.commit();
      if (instance.policy && !policyChecked) {
        policyChecked = true;
        for (const line of policyWarnings(instance.policy.loaded.policy, data.risk)) {
          console.error(`ipintel: warning: ${line}`);
        }
      }
    },
    recordReload: (result) => server.metrics.recordReload(result),
    // A manifest rewritten with no file changed (a confirmation, a failure) reloads quietly.
    version: ({ data }) => data.version.id,
  });

  const reason = await stop.requested;
  const timeout = config.shutdownTimeout;
  let hurried = false;
  stop.hurried.then(() => {
    hurried = true;
    pool?.hurry();
  });
  const stopping = pool?.stop(timeout * 1000) ?? { inFlight: Promise.resolve(0), drained: true };
  const inFlight = server.inFlight() + await stopping.inFlight;
  console.error(
    `ipintel: ${reason}: stopping; ${inFlight} request(s) in flight (waiting up to ${timeout} s, IPINTEL_SHUTDOWN_TIMEOUT)`,
  );
  const drained = await Promise.all([
    instance.stop(timeout * 1000, stop.hurried),
    stopping.drained,
  ]);
  if (!drained.every(Boolean)) {
    console.error(
      hurried
        ? "ipintel: a second signal: not waiting for requests in flight"
        : `ipintel: requests still in flight after ${timeout} s: closing their connections`,
    );
  }
  await log.flush(LOG_FLUSH_MS);
  return await finish(stop, data);
}

/** The longest a stopping server waits for the access log to reach stdout. */
const LOG_FLUSH_MS = 1000;

/** A data set as the main isolate opened it, with what the workers need to open it too. */
interface Loaded {
  data: DataSet;
  handoff: Handoff | null;
}

/** The data-loading side of a server: first load, hot reload, scheduled updates. */
interface DataService {
  /** Stops watching and updating (waits for an update under way to stop). */
  close(): Promise<void>;
  /** Set when the first data set failed to load. */
  error(): unknown;
}

/**
 * Loads the first data set (building the default data on first run), then
 * watches for new ones and keeps the data complete and current in the
 * background (data_keeper.ts). A first load that fails asks the server to stop.
 */
function serveData(
  config: Config,
  stop: StopRequest,
  keeperStatus: DataKeeperStatus,
  target: ReloadTarget<Loaded>,
): DataService {
  // Aborted on the first stop request: a first-run download or a scheduled update stops with it.
  const stopping = new AbortController();
  stop.requested.then(() => stopping.abort());
  // Started once the first data set is served; set from the loading task below.
  const background: { watch?: { close(): void }; schedule?: Promise<void> } = {};
  let loadError: unknown = null;
  (async () => {
    if ((await readManifest(config.dataDir)) === null) {
      await runDataJobInWorker("ensure", config, stopping.signal);
    }
    const loaded = await target.load();
    await target.install(loaded);
    console.error(`ipintel: data loaded from ${config.dataDir}`);
    const absent = loaded.data.absent;
    if (!isEmbeddedData(config.dataDir)) {
      keeperStatus.readOnly = await dataDirWriteProblem(config.dataDir);
    }
    if (absent.length) {
      console.error(
        `ipintel: not installed yet (their flags answer null): ${
          absent.map((s) => s.name).join(", ")
        }; ${absentHint(config, keeperStatus.readOnly, loaded.data)} (details at /status)`,
      );
    } else if (keeperStatus.readOnly) {
      console.error(
        `ipintel: ${keeperStatus.readOnly}: no update can install data until it is not`,
      );
    }
    if (stop.stopping) return;
    background.watch = startHotReload(config, target, undefined, { served: loaded });
    if (isEmbeddedData(config.dataDir)) return; // read-only: nothing to complete or update
    background.schedule = keepData(
      config,
      loaded.data,
      {
        buildMissing: (signal) => runDataJobInWorker("data", config, signal),
        // Not given a sources file, the server updates the one its data was installed from.
        updateAll: async (signal) => {
          const manifest = await readManifest(config.dataDir).catch(() => null);
          const sourcesFile = serverSourcesFile(resolve(config.sourcesFile), manifest);
          return await runDataJobInWorker("update", { ...config, sourcesFile }, signal);
        },
      },
      stopping.signal,
      { status: keeperStatus },
    );
  })().catch((error) => {
    loadError = error;
    stop.request("data failed to load");
  });
  return {
    close: async () => {
      background.watch?.close();
      await background.schedule;
    },
    error: () => loadError,
  };
}

/**
 * What the start-up line says of sources not installed: who fetches them, and
 * when. They are the sources of the file the data was installed from (the
 * manifest records it), so the command names that file.
 */
function absentHint(config: Config, readOnly: string | null, data: DataSet): string {
  if (isEmbeddedData(config.dataDir)) {
    return "the embedded data is read-only: serve a data directory (IPINTEL_DATA_DIR) to add them";
  }
  if (readOnly) return `${readOnly}: no update can install them until it is not`;
  if (config.updateInterval > 0) {
    return "fetching them now in the background (IPINTEL_UPDATE_INTERVAL=off turns this off)";
  }
  return `updates are off (IPINTEL_UPDATE_INTERVAL=off): install them with "${
    updateCommand(serverSourcesFile(resolve(config.sourcesFile), data.manifest))
  }"`;
}

/** The end of a stop: background work ended, signals released, the load error rethrown. */
async function finish(stop: StopRequest, data: DataService): Promise<number> {
  await data.close();
  stop.dispose();
  if (data.error() !== null) throw data.error();
  console.error("ipintel: stopped");
  return 0;
}
