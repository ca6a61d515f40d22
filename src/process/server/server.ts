/**
 * The request handler a server runs, assembled once for `serve` and for the
 * Deno Deploy entry point: the Hono app, with the instrumentation (metrics,
 * request ids, access log) as its outermost answer rule.
 */

import type { AccessControl } from "../../service/keys_limits/access_control.ts";
import { type Config, DEFAULT_ANSWER_CACHE_SIZE, VERSION } from "../../base/config.ts";
import { createApp, ROUTE_LABELS } from "../../service/app/app.ts";
import { AnswerCache } from "../../service/app/answer_cache.ts";
import { createClientAddressResolver } from "../../service/http/client_address.ts";
import {
  type FetchHandler,
  type Served,
  servedOf,
  type ServedSlot,
} from "../../service/http/env.ts";
import { LineWriter } from "../../service/ops/access_log.ts";
import { instrument } from "../../service/ops/instrument.ts";
import { Metrics, type SharedCounts } from "../../service/ops/metrics.ts";
import { createReadiness, type ReadinessCheck } from "../../service/ops/readiness.ts";
import type { PolicyGate } from "../../service/policy/gate.ts";
import { dataDirWriteProblem } from "./data_dir.ts";

type ServerConfig =
  & Pick<
    Config,
    | "bulkMax"
    | "trustedProxies"
    | "forwardedHeader"
    | "corsOrigins"
    | "metrics"
    | "metricsToken"
    | "log"
    | "logFullIp"
  >
  & Partial<Pick<Config, "streamIdleTimeout" | "statusDetail" | "answerCache" | "mcp" | "web">>;

/** How long `/status` trusts its last look at whether the data directory can be written. */
const DATA_DIR_CHECK_MS = 10_000;

export interface ServerOptions {
  config: ServerConfig;
  access?: AccessControl;
  /** What `/ready` checks besides the data (the KV answering, not shutting down). */
  checks?: readonly ReadinessCheck[];
  /** Where access log text goes (whole lines, batched). */
  writeLog: (text: string) => void;
  /** Longest a log line waits to be written (ms; default 100, 0: at once). */
  logFlushMs?: number;
  /** Where diagnostics go (5xx details, with the request id). */
  writeError?: (text: string) => void;
  /** Counts shared with the other workers of the server (absent: this isolate's own). */
  sharedCounts?: SharedCounts;
  /** The forward-auth gate (IPINTEL_POLICY): `GET /auth`, its counts in `/metrics`. */
  policy?: PolicyGate | null;
  /** The data directory updates install into, checked for `/status` (absent: none, as on Deploy). */
  dataDir?: string;
}

export interface Server {
  /** The outermost handler, for Deno.serve or the node:http server. */
  handler: FetchHandler;
  metrics: Metrics;
  /**
   * Starts serving a data set (the first one, or a reloaded one): lookups are
   * counted, and the replaced set's cache counts are kept in the metrics.
   */
  install(next: Served): void;
  /** The id of the data set served now (its `X-Data-Version`), null while none is loaded. */
  dataVersion(): string | null;
  /** Requests whose response is not made yet. */
  inFlight(): number;
  /** Resolves the next time no request is in flight (at once when none is). */
  whenIdle(): Promise<void>;
  /** Writes the access log lines still queued. */
  flushLog(): void;
}

/** Builds the handler; bad configuration throws here, at start-up. */
export function createServer(options: ServerOptions): Server {
  const { config } = options;
  const slot: ServedSlot = { current: null };
  const metrics = new Metrics({
    dataSet: () => slot.current?.data ?? null,
    version: VERSION,
    routes: ROUTE_LABELS,
    shared: options.sharedCounts,
  });
  const writeError = options.writeError ?? ((text) => console.error(text));
  const log = new LineWriter(options.writeLog, { flushMs: options.logFlushMs });
  // 5xx details name the request id the access log line has.
  const logError = (error: unknown, id?: string) => {
    const detail = error instanceof Error ? error.stack ?? error.message : String(error);
    writeError(`ipintel: internal error${id ? ` in request ${id}` : ""}: ${detail}`);
  };
  // One resolver of client addresses: the routes and the access log read the same address.
  const clientAddress = createClientAddressResolver(config);
  const instrumentation = instrument({
    metrics: config.metrics ? metrics : null,
    log: config.log,
    logFullIp: config.logFullIp,
    writeLine: (line) => log.add(line),
    clientAddress,
    routes: ROUTE_LABELS,
  });
  const app = createApp({
    slot,
    config,
    clientAddress,
    answerCache: new AnswerCache({
      entries: config.answerCache ?? DEFAULT_ANSWER_CACHE_SIZE,
      sink: config.metrics ? metrics.answerCacheSink() : null,
    }),
    access: options.access,
    logError,
    ready: createReadiness(options.checks ?? []),
    metrics: config.metrics
      ? {
        render: () => metrics.render() + (options.policy?.counter.render() ?? ""),
        token: config.metricsToken,
      }
      : undefined,
    instrumentation,
    policy: options.policy,
    dataDirectory: options.dataDir === undefined
      ? undefined
      : remembered(DATA_DIR_CHECK_MS, () => dataDirWriteProblem(options.dataDir!)),
  });
  return {
    handler: app.fetch,
    metrics,
    install(next) {
      const previous = slot.current;
      slot.current = config.metrics ? servedOf(next.data, metrics.countLookups(next.lookup)) : next;
      metrics.retireDataSet(previous?.data ?? null);
    },
    dataVersion: () => slot.current?.data.version.id ?? null,
    inFlight: instrumentation.inFlight,
    whenIdle: instrumentation.whenIdle,
    flushLog: () => log.flush(),
  };
}

/** `check`'s last answer, asked again once it is older than `ms`. */
function remembered<T>(ms: number, check: () => Promise<T>): () => Promise<T> {
  let last: { at: number; answer: Promise<T> } | null = null;
  return () => {
    const now = Date.now();
    if (last === null || now - last.at > ms) last = { at: now, answer: check() };
    return last.answer;
  };
}
