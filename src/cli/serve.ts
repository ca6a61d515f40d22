/** `ipintel serve`: loads the data (building it on first run) and serves the HTTP API. */

import type { Config } from "../config.ts";
import { defineCommand } from "./command.ts";
import type { FetchHandler } from "../http/fast_lookup.ts";
import { serveWithNodeHttp } from "../http/node_server.ts";
import { stdoutSink } from "../ops/access_log.ts";
import { describeAccess, startAccess } from "./access.ts";
import { kvReadinessCheck, openKv } from "./kv.ts";
import { startHotReload } from "./reload.ts";
import { createServer, type Server } from "./server.ts";
import { createServices, createSharedParts } from "./services.ts";
import { StopRequest } from "./shutdown.ts";
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

/**
 * Serves until SIGTERM or SIGINT, then stops accepting, lets the requests in
 * flight finish (up to IPINTEL_SHUTDOWN_TIMEOUT), writes the pending rate
 * counts to the KV, closes it and returns 0. A data set that fails to load
 * stops the server the same way, then throws.
 */
export async function runServe(config: Config): Promise<number> {
  const stop = new StopRequest();
  const logError = (error: unknown) => console.error(error);
  const kv = await openKv(config);
  const { access, close: closeAccess } = await startAccess(kv, config, logError);
  const server = createServer({
    config,
    access,
    checks: [
      kvReadinessCheck(kv),
      {
        name: "shutdown",
        check: () =>
          stop.stopping ? Promise.reject(new Error("the server is stopping")) : Promise.resolve(),
      },
    ],
    writeLog: stdoutSink(),
  });
  // Listen at once; lookups answer 503 until the data (built on first run) is loaded.
  const listener = await listen(config, server);
  for (const line of describeAccess(access, config)) console.error(line);

  // Aborted on the first stop request: a first-run download or a scheduled update stops with it.
  const stopping = new AbortController();
  stop.requested.then(() => stopping.abort());
  const shared = createSharedParts();
  // Started once the first data set is served; set from the loading task below.
  const background: { watch?: { close(): void }; schedule?: Promise<void> } = {};
  let loadError: unknown = null;
  (async () => {
    if ((await readManifest(config.dataDir)) === null) {
      await (await builder()).ensureData(config, stopping.signal);
    }
    const services = await createServices(config, shared);
    server.install(services);
    console.error(`ipintel: data loaded from ${config.dataDir}`);
    const absent = services.data.absent;
    if (absent.length) {
      console.error(
        `ipintel: not installed (their flags answer null): ${
          absent.map((s) => s.name).join(", ")
        }; run "deno task ipintel data update" (details at /status)`,
      );
    }
    if (stop.stopping) return;
    background.watch = startHotReload(config, shared, {
      install: (next) => server.install(next),
      recordReload: (result) => server.metrics.recordReload(result),
    });
    if (config.updateInterval > 0) {
      background.schedule = scheduleUpdates(config, stopping.signal);
    }
  })().catch((error) => {
    loadError = error;
    stop.request("data failed to load");
  });

  const reason = await stop.requested;
  const timeout = config.shutdownTimeout;
  console.error(
    `ipintel: ${reason}: stopping; ${server.inFlight()} request(s) in flight (waiting up to ${timeout} s, IPINTEL_SHUTDOWN_TIMEOUT)`,
  );
  const drained = await drain(listener, timeout * 1000, stop.hurried);
  if (!drained) {
    console.error(
      `ipintel: ${server.inFlight()} request(s) still in flight after ${timeout} s: closing their connections`,
    );
    await listener.close();
  }
  background.watch?.close();
  await background.schedule;
  server.flushLog();
  // After the last request: the remaining counts reach the KV before it closes.
  await closeAccess().catch(logError);
  kv.close();
  stop.dispose();
  if (loadError !== null) throw loadError;
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

/** A listening server: `shutdown` stops accepting and waits for requests in flight; `close` does not wait. */
interface Listener {
  shutdown(): Promise<void>;
  close(): Promise<void>;
}

/** True when the requests in flight finished within `timeoutMs` (and no second signal came). */
async function drain(listener: Listener, timeoutMs: number, hurried: Promise<void>) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<boolean>((resolve) => timer = setTimeout(resolve, timeoutMs, false));
  try {
    return await Promise.race([
      listener.shutdown().then(() => true),
      expired,
      hurried.then(() => false),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function listen(
  config: Config,
  server: Pick<Server, "handler" | "whenIdle">,
): Promise<Listener> {
  const handler: FetchHandler = server.handler;
  const announce = (port: number) =>
    console.error(
      `ipintel listening on http://${config.host}:${port} (${config.httpServer} server)`,
    );
  if (config.httpServer === "node") {
    const server = await serveWithNodeHttp({ hostname: config.host, port: config.port }, handler);
    announce(server.port);
    return server;
  }
  const deno = Deno.serve({
    hostname: config.host,
    port: config.port,
    onListen: ({ port }) => announce(port),
  }, handler);
  return {
    // Deno 2.9's shutdown() makes the body of a request in flight unreadable
    // (denoland/deno#36809): wait until no handler is running, serving new
    // requests meanwhile, then stop accepting.
    shutdown: () => server.whenIdle().then(() => deno.shutdown()),
    // Deno.serve cannot cut connections short: past the timeout the process
    // exits with them (runServe returns, main.ts exits).
    close: () => Promise.resolve(),
  };
}
