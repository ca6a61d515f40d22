/**
 * One serving isolate: its KV connection, keys and rate counts, the request
 * handler and the listening socket. `ipintel serve` runs one in its main
 * isolate, or one per worker (src/cli/serve_worker.ts); the data each serves
 * is installed from outside (`server.install`).
 */

import type { Config } from "../config.ts";
import type { FetchHandler } from "../http/pipeline.ts";
import { serveWithNodeHttp } from "../http/node_server.ts";
import type { SharedCounts } from "../ops/metrics.ts";
import { describeAccess, startAccess } from "./access.ts";
import { kvReadinessCheck, openKv } from "./kv.ts";
import { createServer, type Server } from "./server.ts";

export interface Instance {
  server: Server;
  /** The port it listens on (the configured one, or the one the system chose for port 0). */
  port: number;
  /** Marks it as stopping: `/ready` answers 503 from now on. */
  markStopping(): void;
  /**
   * Stops accepting and lets the requests in flight finish (up to `timeoutMs`,
   * or until `hurried` resolves), writes the access log and the pending rate
   * counts, closes the KV. Resolves false when requests were cut short.
   */
  stop(timeoutMs: number, hurried: Promise<void>): Promise<boolean>;
}

export interface InstanceOptions {
  /** Where access log text goes (whole lines). */
  writeLog: (text: string) => void;
  /** Counts shared with the server's other workers. */
  sharedCounts?: SharedCounts;
  /** Share the port with the other workers (Deno.serve's reusePort). */
  reusePort?: boolean;
  /** Listen here instead of the configured port (the port worker 0 got for port 0). */
  port?: number;
  /** Prints the listening and access-control lines (one worker does, for all). */
  announce?: boolean;
  /** The label in the listening line ("deno server", "2 workers"). */
  label?: string;
}

/** Opens the KV, starts access control and listens; lookups answer 503 until data is installed. */
export async function startInstance(config: Config, options: InstanceOptions): Promise<Instance> {
  const logError = (error: unknown) => console.error(error);
  const kv = await openKv(config);
  const announce = options.announce ?? true;
  const { access, close: closeAccess } = await startAccess(kv, config, logError, announce);
  let stopping = false;
  const server = createServer({
    config,
    access,
    checks: [
      kvReadinessCheck(kv),
      {
        name: "shutdown",
        check: () =>
          stopping ? Promise.reject(new Error("the server is stopping")) : Promise.resolve(),
      },
    ],
    writeLog: options.writeLog,
    sharedCounts: options.sharedCounts,
  });
  const listener = await listen(config, server, options);
  if (announce) {
    console.error(
      `ipintel listening on http://${config.host}:${listener.port} (${
        options.label ?? `${config.httpServer} server`
      })`,
    );
    for (const line of describeAccess(access, config)) console.error(line);
  }
  return {
    server,
    port: listener.port,
    markStopping: () => stopping = true,
    async stop(timeoutMs, hurried) {
      stopping = true;
      const drained = await drain(listener, timeoutMs, hurried);
      if (!drained) await listener.close();
      server.flushLog();
      // After the last request: the remaining counts reach the KV before it closes.
      await closeAccess().catch(logError);
      kv.close();
      return drained;
    },
  };
}

/** A listening server: `shutdown` stops accepting and waits for requests in flight; `close` does not wait. */
interface Listener {
  port: number;
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
  options: InstanceOptions,
): Promise<Listener> {
  const handler: FetchHandler = server.handler;
  const port = options.port ?? config.port;
  if (config.httpServer === "node") {
    return await serveWithNodeHttp({ hostname: config.host, port }, handler);
  }
  const { promise: listening, resolve } = Promise.withResolvers<number>();
  const deno = Deno.serve({
    hostname: config.host,
    port,
    reusePort: options.reusePort ?? false,
    onListen: ({ port }) => resolve(port),
  }, handler);
  return {
    port: await listening,
    // Deno 2.9's shutdown() makes the body of a request in flight unreadable
    // (denoland/deno#36809): wait until no handler is running, serving new
    // requests meanwhile, then stop accepting.
    shutdown: () => server.whenIdle().then(() => deno.shutdown()),
    // Deno.serve cannot cut connections short: past the timeout the process
    // exits with them (runServe returns, main.ts exits).
    close: () => Promise.resolve(),
  };
}
