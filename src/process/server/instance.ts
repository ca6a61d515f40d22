/**
 * One serving isolate: its KV connection, keys and rate counts, the request
 * handler and the listening socket. `ipintel serve` runs one in its main
 * isolate, or one per worker (src/process/server/serve_worker.ts); the data each serves
 * is installed from outside (`server.install`).
 */

import type { Config } from "../../base/config.ts";
import type { FetchHandler } from "../../service/http/env.ts";
import { serveWithNodeHttp } from "../../service/http/node_server.ts";
import { LogSink } from "../../service/ops/log_sink.ts";
import type { SharedCounts } from "../../service/ops/metrics.ts";
import { assertNotOpenByDefault, describeAccess, startAccess } from "./keys_limits.ts";
import { kvReadinessCheck, openKv } from "./kv.ts";
import { createServer, type Server } from "./server.ts";
import { readTlsPair, type TlsPair, watchTlsPair } from "./tls.ts";
import { DecisionCounter } from "../../service/policy/counter.ts";
import { PolicyGate } from "../../service/policy/gate.ts";

export interface Instance {
  server: Server;
  /** The forward-auth gate, when IPINTEL_POLICY is set. */
  policy: PolicyGate | null;
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
  /** The server's rate table (src/service/keys_limits/rate_table.ts), shared by all its isolates. */
  rateTable?: SharedArrayBuffer;
  /** Share the port with the other workers (Deno.serve's reusePort). */
  reusePort?: boolean;
  /** Listen here instead of the configured port (the port worker 0 got for port 0). */
  port?: number;
  /** Prints the listening and access-control lines (one worker does, for all). */
  announce?: boolean;
  /** The label in the listening line ("deno server", "2 workers"). */
  label?: string;
  /** The forward-auth decision counts every isolate shares (src/service/policy/counter.ts), and this one's slice. */
  policyCounts?: { buffer: SharedArrayBuffer; isolates: number; slice: number };
}

/** Opens the KV, starts access control and listens; lookups answer 503 until data is installed. */
export async function startInstance(config: Config, options: InstanceOptions): Promise<Instance> {
  const logError = (error: unknown) => console.error(error);
  const announce = options.announce ?? true;
  // A bad certificate/key pair stops the start here, before anything opens (warnings: once).
  const tls = await readTlsPair(config, (line) => announce && console.error(line));
  // So does a bad policy (exit 2 naming the rule); like the TLS files, each isolate watches it.
  const policy = config.policy
    ? await PolicyGate.open(config.policy, {
      report: (line) => announce && console.error(line),
      counter: new DecisionCounter(options.policyCounts),
    })
    : null;
  const kv = await openKv(config).catch((error) => {
    policy?.close();
    throw error;
  });
  const { access, readiness, close: closeAccess } = await startAccess(
    kv,
    config,
    announce,
    options.rateTable,
  );
  /** Start-up failed after the KV opened: close what was started, then throw. */
  const abandon = async (error: unknown): Promise<never> => {
    policy?.close();
    await closeAccess();
    kv.close();
    throw error;
  };
  try {
    assertNotOpenByDefault(access, config);
  } catch (error) {
    await abandon(error);
  }
  let stopping = false;
  // 5xx details go to stderr as the access log to stdout: never holding up or failing a request.
  const errors = new LogSink({
    out: Deno.stderr,
    onDrop: (lines) => server.metrics.recordLogDropped(lines),
  });
  const server = createServer({
    config,
    access,
    checks: [
      kvReadinessCheck(kv),
      readiness,
      {
        name: "shutdown",
        check: () =>
          stopping ? Promise.reject(new Error("the server is stopping")) : Promise.resolve(),
      },
    ],
    writeLog: options.writeLog,
    writeError: (text) => errors.write(`${text}\n`),
    sharedCounts: options.sharedCounts,
    policy,
    dataDir: config.dataDir,
  });
  const listener = await listen(config, server, options, tls).catch(abandon);
  // Every isolate watches the files itself and swaps its own listener's pair.
  const tlsWatch = tls
    ? watchTlsPair(
      config,
      (pair) => listener.setTls(pair),
      (line) => announce && console.error(line),
    )
    : null;
  if (announce) {
    console.error(
      `ipintel listening on ${tls ? "https" : "http"}://${urlHost(config.host)}:${listener.port} (${
        options.label ?? `${config.httpServer} server`
      })`,
    );
    for (const line of describeAccess(access, config)) console.error(line);
    if (policy) {
      const { file, version, rules } = policy.status();
      console.error(`ipintel: GET /auth judges by ${file} (version ${version}, ${rules} rules)`);
    }
  }
  return {
    server,
    policy,
    port: listener.port,
    markStopping: () => stopping = true,
    async stop(timeoutMs, hurried) {
      stopping = true;
      tlsWatch?.close();
      policy?.close();
      const drained = await drain(listener, timeoutMs, hurried);
      if (!drained) await listener.close();
      server.flushLog();
      await errors.flush(1000);
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
  /** Serves new connections with a new certificate and key (HTTPS listeners). */
  setTls(pair: TlsPair): Promise<void>;
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
  server: Pick<Server, "handler" | "whenIdle" | "dataVersion">,
  options: InstanceOptions,
  tls: TlsPair | null,
): Promise<Listener> {
  const handler: FetchHandler = server.handler;
  const port = options.port ?? config.port;
  // Deno.serve keeps its certificate for life: a new pair means a new server on
  // the same port (reusePort, so both listen a moment), then the old one stops.
  const reusePort = (options.reusePort ?? false) || (tls !== null && Deno.build.os === "linux");
  // The workers join the port the main isolate claimed (options.port); the main isolate claims it.
  const claimed = options.port === undefined && reusePort ? claimPort(config.host, port) : port;
  try {
    if (config.httpServer === "node") {
      const node = await serveWithNodeHttp(
        { hostname: config.host, port: claimed, tls, dataVersion: server.dataVersion },
        handler,
      );
      return { ...node, setTls: (pair) => Promise.resolve(node.setTls(pair)) };
    }
    const start = (port: number, pair: TlsPair | null) => {
      const { promise: listening, resolve } = Promise.withResolvers<number>();
      const deno = Deno.serve({
        hostname: config.host,
        port,
        reusePort,
        onListen: ({ port }) => resolve(port),
        ...(pair ?? {}),
      }, handler);
      return { deno, listening };
    };
    const first = start(claimed, tls);
    let deno = first.deno;
    const bound = await first.listening;
    let retiring: Promise<void> = Promise.resolve();
    return {
      port: bound,
      // Deno 2.9's shutdown() makes the body of a request in flight unreadable
      // (denoland/deno#36809): wait until no handler is running, serving new
      // requests meanwhile, then stop accepting.
      shutdown: () =>
        server.whenIdle().then(() => Promise.all([deno.shutdown(), retiring])).then(() => {}),
      // Deno.serve cannot cut connections short: past the timeout the process
      // exits with them (runServe returns, main.ts exits).
      close: () => Promise.resolve(),
      setTls: async (pair) => {
        if (!reusePort) await deno.shutdown(); // no port sharing here: a moment without a listener
        const next = start(bound, pair);
        await next.listening;
        const old = deno;
        deno = next.deno;
        if (reusePort) retiring = old.shutdown();
      },
    };
  } catch (error) {
    throw inUse(error) ? portInUse(config.host, claimed) : error;
  }
}

/**
 * Makes sure nothing listens on the port yet, and returns it (the one the
 * system chose, for port 0). The workers share the port with SO_REUSEPORT,
 * and on Linux any process of the same user that sets it too joins the group
 * and gets a share of the connections: an ipintel started twice would split
 * the traffic with the old one. So the port is first bound without
 * SO_REUSEPORT, which Linux refuses while any socket (reusing or not, of any
 * user, on this address or the wildcard) listens there; then released and
 * bound again with it in the same tick (`Deno.listen` and `Deno.serve` bind
 * synchronously), leaving no await in between for another server to start in.
 */
function claimPort(host: string, port: number): number {
  try {
    const probe = Deno.listen({ hostname: host, port });
    const claimed = (probe.addr as Deno.NetAddr).port;
    probe.close();
    return claimed;
  } catch (error) {
    throw inUse(error) ? portInUse(host, port) : error;
  }
}

function inUse(error: unknown): boolean {
  return error instanceof Deno.errors.AddrInUse ||
    (error as { code?: unknown } | null)?.code === "EADDRINUSE";
}

function portInUse(host: string, port: number): Error {
  return new Error(
    `Port ${port} on ${host} is already in use: another server (an ipintel, or another program) listens there; stop it or choose another port (PORT, --port)`,
  );
}

/** A host as a URL writes it: an IPv6 address in brackets (`[::1]`). */
function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
