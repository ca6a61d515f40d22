/** `ipintel serve`: loads the data (building it on first run) and serves the HTTP API. */

import type { Config } from "../config.ts";
import { defineCommand } from "./command.ts";
import { createApp, type ServiceSlot } from "../http/app.ts";
import { type FetchHandler, withFastLookup } from "../http/fast_lookup.ts";
import { serveWithNodeHttp } from "../http/node_server.ts";
import { describeAccess, startAccess } from "./access.ts";
import { openKv } from "./kv.ts";
import { startHotReload } from "./reload.ts";
import { createServices, createSharedParts } from "./services.ts";
import { readManifest } from "../sources/manifest.ts";

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

/** Serves until SIGINT/SIGTERM, then stops accepting and finishes in-flight requests. */
async function runServe(config: Config): Promise<number> {
  // Listen at once; lookups answer 503 until the data (built on first run) is loaded.
  const services: ServiceSlot = { current: null };
  const logError = (error: unknown) => console.error(error);
  const kv = await openKv(config);
  const { access, close: closeAccess } = await startAccess(kv, config, logError);
  const app = createApp({ services, config, access, logError });
  const server = await listen(config, withFastLookup(services, config, app.fetch, access));
  for (const line of describeAccess(access, config)) console.error(line);
  const stopping = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => {
      stopping.abort();
      server.close();
    });
  }
  /** After the last request: the remaining counts reach the KV before it closes. */
  const release = async () => {
    await closeAccess().catch(logError);
    kv.close();
  };
  const shared = createSharedParts();
  try {
    if ((await readManifest(config.dataDir)) === null) {
      await (await builder()).ensureData(config, stopping.signal);
    }
    services.current = await createServices(config, shared);
    console.error(`ipintel: data loaded from ${config.dataDir}`);
    const absent = services.current.data.absent;
    if (absent.length) {
      console.error(
        `ipintel: not installed (their flags answer null): ${
          absent.map((s) => s.name).join(", ")
        }; run "deno task ipintel data update" (details at /status)`,
      );
    }
  } catch (error) {
    await server.close();
    await release();
    throw error;
  }
  const watch = startHotReload(config, services, shared);
  const schedule = config.updateInterval > 0 ? scheduleUpdates(config, stopping.signal) : null;
  await server.finished;
  watch.close();
  await schedule;
  await release();
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

async function listen(config: Config, handler: FetchHandler) {
  const announce = (port: number) =>
    console.error(
      `ipintel listening on http://${config.host}:${port} (${config.httpServer} server)`,
    );
  if (config.httpServer === "node") {
    const server = await serveWithNodeHttp({ hostname: config.host, port: config.port }, handler);
    announce(server.port);
    return server;
  }
  const controller = new AbortController();
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    signal: controller.signal,
    onListen: ({ port }) => announce(port),
  }, handler);
  return {
    finished: server.finished,
    close: () => {
      controller.abort();
      return server.finished;
    },
  };
}
