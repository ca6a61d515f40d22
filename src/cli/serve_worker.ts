/**
 * A request-serving worker of `ipintel serve` (IPINTEL_WORKERS > 1): one
 * serving instance on the main isolate's port, over the data the main
 * isolate read, verified and shares with every worker. Its rate counts live in
 * the server's shared rate table, so one server's limits are exact on every worker.
 */

/// <reference lib="deno.worker" />

import { startInstance } from "./instance.ts";
import { createSharedParts, openServedData, servicesFor } from "./services.ts";
import type { FromWorker, ToWorker } from "./worker_protocol.ts";

/** How often the record caches' counts reach the shared metrics (a scrape may land elsewhere). */
const PUBLISH_CACHE_COUNTS_MS = 1000;

const post = (message: FromWorker) => self.postMessage(message);
const { promise: hurried, resolve: hurry } = Promise.withResolvers<void>();
let started: Promise<Awaited<ReturnType<typeof start>>> | null = null;
/** Data sets are installed one after another, in the order they came. */
let installing = Promise.resolve();

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case "start":
      started = start(message);
      break;
    case "data":
      installing = installing.then(async () => {
        const { config, instance, shared } = await started!;
        try {
          const data = await openServedData(config, { verified: message.files });
          const services = servicesFor(data, shared);
          instance.server.install(services);
          post({ type: "installed", error: null });
        } catch (error) {
          post({
            type: "installed",
            error: error instanceof Error ? error.message : String(error),
          });
        }
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

async function start(message: Extract<ToWorker, { type: "start" }>) {
  const config = Object.freeze(message.config);
  // Warmed between requests (and while the main isolate still verifies the data).
  const shared = createSharedParts("background");
  const instance = await startInstance(config, {
    writeLog: (text) => post({ type: "log", text }),
    sharedCounts: { buffer: message.counts, slice: message.slice },
    rateTable: message.rateTable,
    reusePort: true,
    port: message.port,
    announce: false,
  });
  post({ type: "listening", port: instance.port });
  const publisher = setInterval(
    () => instance.server.metrics.publishCacheCounts(),
    PUBLISH_CACHE_COUNTS_MS,
  );
  return { config, instance, shared, publisher };
}
