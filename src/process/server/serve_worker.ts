/**
 * A request-serving worker of `ipintel serve` (IPINTEL_WORKERS > 1): one
 * serving instance on the main isolate's port, over the data the main
 * isolate read, verified and shares with every worker. Its rate counts live in
 * the server's shared rate table, so one server's limits are exact on every worker.
 */

/// <reference lib="deno.worker" />

import { guardUncaughtErrors } from "./error_guard.ts";
import { startInstance } from "./instance.ts";
import { createSharedParts, openServedData, type Served, servedFor } from "./served.ts";
import type { FromWorker, ToWorker } from "./worker_protocol.ts";

/** How often the record caches' counts reach the shared metrics (a scrape may land elsewhere). */
const PUBLISH_CACHE_COUNTS_MS = 1000;

const post = (message: FromWorker) => self.postMessage(message);

self.onmessage = createWorker();

/** The worker's message handler, holding what the worker has started and opened. */
function createWorker(): (event: MessageEvent<ToWorker>) => void {
  const { promise: hurried, resolve: hurry } = Promise.withResolvers<void>();
  let started: Promise<Awaited<ReturnType<typeof start>>> | null = null;
  /** Data sets are opened one after another, in the order they came. */
  let installing = Promise.resolve();
  /** The set opened last, waiting for the main isolate's "commit" or "discard". */
  let prepared: Served | null = null;

  return (event) => {
    const message = event.data;
    switch (message.type) {
      case "start":
        started = start(message);
        break;
      case "data":
        installing = installing.then(async () => {
          const { config, shared } = await started!;
          try {
            const data = await openServedData(config, { handoff: message.handoff });
            prepared = servedFor(data, shared);
            post({ type: "prepared", error: null });
          } catch (error) {
            prepared = null;
            post({
              type: "prepared",
              error: error instanceof Error ? error.message : String(error),
            });
          }
        });
        break;
      case "commit":
        installing = installing.then(async () => {
          const { instance } = await started!;
          if (prepared) instance.server.install(prepared);
          prepared = null;
          post({ type: "installed" });
        });
        break;
      case "discard":
        installing = installing.then(() => {
          prepared = null;
        });
        break;
      case "stop":
        started!.then(async ({ instance, publisher }) => {
          clearInterval(publisher);
          post({ type: "stopping", inFlight: instance.server.inFlight() });
          const drained = await instance.stop(message.timeoutMs, hurried);
          post({ type: "stopped", drained });
        });
        break;
      case "hurry":
        hurry();
        break;
    }
  };
}

async function start(message: Extract<ToWorker, { type: "start" }>) {
  const config = Object.freeze(message.config);
  // Warmed between requests (and while the main isolate still verifies the data).
  const shared = createSharedParts("background");
  const instance = await startInstance(config, {
    writeLog: (text) => post({ type: "log", text }),
    sharedCounts: { buffer: message.counts, slice: message.slice },
    rateTable: message.rateTable,
    policyCounts: message.policyCounts && { ...message.policyCounts, slice: message.slice },
    reusePort: true,
    port: message.port,
    announce: false,
  });
  // From now on an error nothing caught is logged and counted; before, it fails the
  // worker, which stops the server gracefully (a worker that cannot serve is of no use).
  guardUncaughtErrors(() => instance.server.metrics.recordUncaughtError());
  post({ type: "listening", port: instance.port });
  const publisher = setInterval(
    () => instance.server.metrics.publishCacheCounts(),
    PUBLISH_CACHE_COUNTS_MS,
  );
  return { config, instance, shared, publisher };
}
