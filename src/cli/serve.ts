/** `ipintel serve`: loads the data (building it on first run) and serves the HTTP API. */

import type { Config } from "../config.ts";
import { stdoutSink } from "../ops/access_log.ts";
import { Metrics, sharedCountsBuffer } from "../ops/metrics.ts";
import type { DataSet } from "../sources/data_set.ts";
import { readManifest } from "../sources/manifest.ts";
import { defineCommand, VERSION } from "./command.ts";
import { startInstance } from "./instance.ts";
import { type ReloadTarget, startHotReload } from "./reload.ts";
import { createServices, createSharedParts, openServedData } from "./services.ts";
import { StopRequest } from "./shutdown.ts";
import { WorkerPool } from "./worker_pool.ts";

/**
 * The data builder and updater (src/update, the MMDB writer): loaded only when the
 * server has something to build (first run) or a scheduled update is due, so the
 * serving code does not depend on it.
 */
const builder = () => import("./data.ts");

export const serveCommand = defineCommand({
  summary: "Serve the HTTP API (builds the default data on first run)",
  run: ({ config }) => runServe(config),
});

/**
 * Serves until SIGTERM or SIGINT, then stops accepting, lets the requests in
 * flight finish (up to IPINTEL_SHUTDOWN_TIMEOUT), writes the pending rate
 * counts to the KV, closes it and returns 0. A data set that fails to load
 * stops the server the same way, then throws. With IPINTEL_WORKERS > 1 the
 * main isolate loads the data and the workers serve it (runWorkers).
 */
export async function runServe(config: Config): Promise<number> {
  if (config.workers > 1 && config.httpServer === "deno") return await runWorkers(config);
  const stop = new StopRequest();
  const instance = await startInstance(config, { writeLog: stdoutSink() });
  const server = instance.server;
  stop.requested.then(() => instance.markStopping());
  const shared = createSharedParts();
  const data = serveData(config, stop, {
    load: () => createServices(config, shared),
    dataOf: (services) => services.data,
    install: (services) => server.install(services),
    recordReload: (result) => server.metrics.recordReload(result),
  });
  const reason = await stop.requested;
  const timeout = config.shutdownTimeout;
  console.error(
    `ipintel: ${reason}: stopping; ${server.inFlight()} request(s) in flight (waiting up to ${timeout} s, IPINTEL_SHUTDOWN_TIMEOUT)`,
  );
  if (!(await instance.stop(timeout * 1000, stop.hurried))) {
    console.error(
      `ipintel: ${server.inFlight()} request(s) still in flight after ${timeout} s: closing their connections`,
    );
  }
  return await finish(stop, data);
}

/**
 * IPINTEL_WORKERS > 1: workers serve on one port (reusePort: the kernel
 * spreads connections over them); this isolate reads and verifies each data
 * set once, into shared memory every worker reads, and runs the hot reload,
 * the scheduled updates and the shutdown for all of them. Metrics are counted
 * per worker in one shared buffer, so any worker's `/metrics` has the totals.
 */
async function runWorkers(config: Config): Promise<number> {
  const stop = new StopRequest();
  const count = config.workers;
  const counts = sharedCountsBuffer(count + 1);
  // This isolate's own slice: it counts the reloads.
  const metrics = new Metrics({
    dataSet: () => null,
    version: VERSION,
    shared: { buffer: counts, slice: count },
  });
  const workers = new WorkerPool(config, counts, stdoutSink());
  workers.failed.then((message) => {
    console.error(`ipintel: ${message}`);
    stop.request("a worker failed");
  });
  await workers.start(count);
  const data = serveData(config, stop, {
    load: () => openServedData(config, { share: true }),
    dataOf: (set) => set,
    install: (set) => workers.install(set),
    recordReload: (result) => metrics.recordReload(result),
  });
  const reason = await stop.requested;
  const timeout = config.shutdownTimeout;
  stop.hurried.then(() => workers.hurry());
  const drained = await workers.stop(timeout * 1000, (inFlight) =>
    console.error(
      `ipintel: ${reason}: stopping; ${inFlight} request(s) in flight in ${count} workers (waiting up to ${timeout} s, IPINTEL_SHUTDOWN_TIMEOUT)`,
    ));
  if (!drained) {
    console.error(
      `ipintel: requests still in flight after ${timeout} s: closing their connections`,
    );
  }
  return await finish(stop, data);
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
 * watches for new ones and runs the scheduled updates. A first load that
 * fails asks the server to stop.
 */
function serveData<T>(
  config: Config,
  stop: StopRequest,
  target: ReloadTarget<T> & { dataOf(loaded: T): DataSet },
): DataService {
  // Aborted on the first stop request: a first-run download or a scheduled update stops with it.
  const stopping = new AbortController();
  stop.requested.then(() => stopping.abort());
  // Started once the first data set is served; set from the loading task below.
  const background: { watch?: { close(): void }; schedule?: Promise<void> } = {};
  let loadError: unknown = null;
  (async () => {
    if ((await readManifest(config.dataDir)) === null) {
      await (await builder()).ensureData(config, stopping.signal);
    }
    const loaded = await target.load();
    await target.install(loaded);
    console.error(`ipintel: data loaded from ${config.dataDir}`);
    const absent = target.dataOf(loaded).absent;
    if (absent.length) {
      console.error(
        `ipintel: not installed (their flags answer null): ${
          absent.map((s) => s.name).join(", ")
        }; run "deno task ipintel data update" (details at /status)`,
      );
    }
    if (stop.stopping) return;
    background.watch = startHotReload(config, target);
    if (config.updateInterval > 0) {
      background.schedule = scheduleUpdates(config, stopping.signal);
    }
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

/** The end of a stop: background work ended, signals released, the load error rethrown. */
async function finish(stop: StopRequest, data: DataService): Promise<number> {
  await data.close();
  stop.dispose();
  if (data.error() !== null) throw data.error();
  console.error("ipintel: stopped");
  return 0;
}

async function scheduleUpdates(config: Config, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, config.updateInterval * 1000);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done);
    });
    if (signal.aborted) return;
    try {
      await (await builder()).runDataUpdate(config, signal);
    } catch (error) {
      console.error(`update: ${error instanceof Error ? error.message : error}`);
    }
  }
}
