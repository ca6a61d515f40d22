/**
 * `createApp(deps)`: the Hono app. Every route of the table (routes.ts) is
 * registered on it, the compatible APIs' own routes included, each with one
 * handler. Every rule a request must pass is made by a factory at start-up
 * and runs around each handler (rules/rules.ts), in this order: the
 * instrumentation (metrics, access log, requests in flight, hono/request-id
 * while every request is logged), the data set pinned and X-Data-Version,
 * CORS, RateLimit headers, HEAD, the Host check; then, on the native API's
 * keyed routes, the key; then the handler. A handler's error is answered in
 * the format the request asks for; `notFound` answers the 404s, and the 405s
 * of a known path (with its `Allow`).
 */

import { Hono } from "hono";
import { RegExpRouter } from "hono/router/reg-exp-router";
import type { AccessControl } from "../access/access.ts";
import { bearerMatches } from "../access/credentials.ts";
import { splitBulkList } from "../bulk/items.ts";
import { lookupItem } from "../bulk/stream.ts";
import { COMPAT_ROUTES } from "../compat/routes.ts";
import { type Config, DEFAULT_STREAM_IDLE_TIMEOUT } from "../../base/config.ts";
import { parseAsnSelection } from "../../core/asn/layout.ts";
import { createAsnView } from "../../core/asn/view.ts";
import {
  AppError,
  BadRequestError,
  DataUnavailableError,
  UnauthorizedError,
} from "../../base/errors.ts";
import { parseFormat, renderError, renderLookup } from "../../core/format/mod.ts";
import { METRICS_CONTENT_TYPE } from "../../core/format/render.ts";
import { streamFormat } from "../../core/format/stream.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import { redactUrl, sourceOrigin } from "../../data/sources/redact_url.ts";
import type { Json } from "../../base/types.ts";
import { acceptsHtml, createSite, type SiteAnswer } from "../web/site.ts";
import { type Admission, createAdmission, identifyByKey } from "./admission.ts";
import {
  bodyFormat,
  type BulkStreamDeps,
  streamBodyAnswer,
  streamListAnswer,
} from "./bulk_stream.ts";
import { createClientAddressResolver } from "./client_address.ts";
import { type CompatDeps, compatHandler } from "./compat_handler.ts";
import { type AppContext, type AppEnv, bodyStream, FORMAT_HEADERS, peerAddress } from "./env.ts";
import { type ErrorLog, errorResponse, noRoute, unservedMethod } from "./error_response.ts";
import { type LookupRequest, readLookupQuery, readLookupRequest } from "./lookup_request.ts";
import { corsHeaders, preflight } from "./rules/cors.ts";
import { pinDataSet } from "./rules/data_version.ts";
import { headAnswer } from "./rules/head.ts";
import { hostCheck } from "./rules/host_check.ts";
import { rateLimitHeaders } from "./rules/rate_headers.ts";
import { type AnswerHandler, answerPipeline, type AnswerRule } from "./rules/rules.ts";
import { OPENAPI_DOCUMENT } from "./openapi.ts";
import { requestPath } from "./request_target.ts";
import {
  familyPattern,
  handlerPatterns,
  type RoutePath,
  ROUTES,
  type RouteSpec,
} from "./routes.ts";
import type { ServiceSlot } from "./service_slot.ts";
import { statusRoute } from "./status_route.ts";
import { familyIndex } from "./route_label.ts";
import type { PolicyGate } from "../policy/gate.ts";

export type { ServiceSlot };
export type App = Hono<AppEnv>;

export interface AppDeps {
  services: ServiceSlot;
  config:
    & Pick<Config, "bulkMax" | "trustedProxies" | "forwardedHeader" | "corsOrigins">
    & Partial<Pick<Config, "web" | "streamIdleTimeout" | "statusDetail">>;
  /** Keys and rate limits; without it the API is open (as with IPINTEL_AUTH=off). */
  access?: AccessControl;
  /** Where 5xx details go (with the request's id); the client only sees a generic message. */
  logError?: (error: unknown, requestId?: string) => void;
  /** Readiness beyond the data being loaded (the KV answering...): null when ready, else why not. */
  ready?: () => Promise<string | null>;
  /** Why the data directory cannot be written (null: it can), for `/status`; absent: not shown. */
  dataDirectory?: () => Promise<string | null>;
  /** Serves `GET /metrics` (absent: no such route); with a token, only to `Bearer <token>`. */
  metrics?: { render: () => string; token: string | null };
  /** The forward-auth gate (IPINTEL_POLICY) `GET /auth` judges by; absent: /auth answers 404. */
  policy?: PolicyGate | null;
  /**
   * The outermost answer rule: metrics, access log and requests in flight
   * (src/service/ops/instrument.ts), with request ids (hono/request-id) for the logged answers.
   */
  instrumentation?: {
    rule: AnswerRule;
    /** A request's id, made on first use (undefined while nothing is logged). */
    requestId?: (c: AppContext) => string | undefined;
  };
}

/** Builds the app; bad configuration (e.g. a trusted-proxy CIDR) throws here, at start-up. */
export function createApp(deps: AppDeps): App {
  const { services, config } = deps;
  const resolveClient = createClientAddressResolver(config);
  const client = (c: AppContext) => resolveClient(peerAddress(c), c.req.raw.headers);
  const admission = createAdmission(deps.access, client);
  const log = deps.logError ?? ((error: unknown) => console.error(error));
  const logError: ErrorLog = (error, c) => log(error, deps.instrumentation?.requestId?.(c));
  const site = config.web === false ? null : createSite({ bulkMax: config.bulkMax });
  /** The data set pinned for this request (rules/data_version.ts); 503 while loading. */
  const current = (c: AppContext) => {
    const served = c.get("served");
    if (!served) throw new DataUnavailableError(LOADING_MESSAGE);
    return served;
  };

  // Routing on the path as sent (requestPath): a forged Host cannot move it.
  const app = new Hono<AppEnv>({ router: new RegExpRouter(), getPath: requestPath });
  // The rules of every answer, around every handler: a refused Host and a handler's error
  // are answered and decorated like any answer.
  const rules = [
    ...(deps.instrumentation ? [deps.instrumentation.rule] : []),
    pinDataSet(services),
    corsHeaders(config.corsOrigins),
    rateLimitHeaders(),
    headAnswer(),
    hostCheck(),
  ];
  const answered = answerPipeline(rules, (c, error) => errorResponse(c, error, logError));
  app.onError((error, c) => errorResponse(c, error, logError));

  const handlers = routeHandlers({
    deps,
    admission,
    client,
    current,
    site,
    streamDeps: (c) => ({
      lookup: current(c).lookup,
      // The key is checked again at every batch: a revoked, rotated or re-limited key
      // ends a running stream with its final record, as it refuses new requests.
      charge: (units) => {
        const caller = admission.recheck(c);
        if (caller instanceof UnauthorizedError) return Promise.resolve(caller);
        return Promise.resolve(admission.charge(c, caller, units));
      },
      remaining: () => c.get("rate")?.remaining ?? null,
      idleTimeoutMs: (config.streamIdleTimeout ?? DEFAULT_STREAM_IDLE_TIMEOUT) * 1000,
      logError: (error) => logError(error, c),
    }),
  });
  const compat: CompatDeps = {
    admission,
    client,
    served: current,
    bulkMax: config.bulkMax,
    logError,
  };
  // The native API's key, read before the handler on the routes that take one.
  const keyed = (handler: AnswerHandler): AnswerHandler => (c) => {
    identifyByKey(admission, c);
    return handler(c);
  };
  const table: readonly RouteSpec[] = ROUTES;
  // Exact routes first: where `/bulk/*` also covers `/bulk`, the exact route's family answers.
  const ordered = [...table.keys()].sort((a, b) =>
    Number(table[a]!.path.includes("{")) - Number(table[b]!.path.includes("{"))
  );
  // Each family's paths, for the answer to a request no handler takes (405 or 404).
  const families = new RegExpRouter<number>();
  for (const index of ordered) {
    const route = table[index]!;
    const handler = handlers[route.path as RoutePath];
    if (handler) {
      const keyedRoute = KEYED_ROUTES.has(route.path);
      app.on(
        [...route.methods],
        handlerPatterns(route),
        answered(keyedRoute ? keyed(handler) : handler),
      );
    }
    // A compatible API's family: its own routes (each reads its key its own way).
    for (const compatRoute of COMPAT_ROUTES) {
      if (familyIndex(compatRoute.path) !== index) continue;
      app.on(compatRoute.method, compatRoute.path, answered(compatHandler(compatRoute, compat)));
    }
    app.options(familyPattern(route), answered(preflight(route)));
    families.add("ALL", familyPattern(route), index);
  }
  // No handler took the request: a 405 on a known path (HEAD judged as GET), else a 404.
  app.notFound(answered((c) => {
    const [matched] = families.match(c.req.method, c.req.path);
    const index = ordered.find((i) => matched.some(([family]) => family === i));
    if (index === undefined) throw noRoute(c);
    c.set("family", index); // its label in metrics and the access log
    throw unservedMethod(c, table[index]!);
  }));
  return app;
}

/**
 * The native API's routes that identify their caller by key (a 401 before
 * anything else). `/status` too (it names the sources; not charged): it
 * follows the auth mode, while `/health` and `/ready` stay open for probes.
 */
const KEYED_ROUTES: ReadonlySet<string> = new Set([
  "/ip/{ip}",
  "/me",
  "/auth",
  "/bulk/{ip_list}",
  "/bulk",
  "/asn/{n}",
  "/status",
]);

interface HandlerDeps {
  deps: AppDeps;
  admission: Admission;
  client: (c: AppContext) => string;
  current: (c: AppContext) => NonNullable<ServiceSlot["current"]>;
  site: ReturnType<typeof createSite> | null;
  streamDeps: (c: AppContext) => BulkStreamDeps;
}

/** One handler per route of the table (the compatible families have their own routes). */
function routeHandlers(h: HandlerDeps): { [P in RoutePath]?: AnswerHandler } {
  const { deps, admission, client, current, site } = h;
  const readyBodies = new WeakMap<DataSet, string>();
  const openApiBody = JSON.stringify(OPENAPI_DOCUMENT);
  // The ASN index of each data set, built on its first /asn question (src/core/asn/view.ts).
  const asnView = createAsnView();

  /**
   * A lookup: the addresses (null: the caller's own), the parameters (400),
   * then one unit per address charged (a list all or nothing; 429), then the
   * answer. Synchronous unless a JSON body is read or the charge waits for the
   * shared count: a GET answered at once makes no promise (bench/middleware_bench.ts).
   */
  const lookup = (c: AppContext, ips: string | string[] | null) => {
    const addresses = ips ?? client(c);
    const p = readLookupRequest(c);
    return p instanceof Promise
      ? p.then((p) => chargeAndAnswer(c, addresses, p))
      : chargeAndAnswer(c, addresses, p);
  };
  const chargeAndAnswer = (c: AppContext, addresses: string | string[], p: LookupRequest) => {
    if (typeof addresses !== "string" && addresses.length === 0) {
      throw new BadRequestError("Empty bulk list: give at least one IP address");
    }
    const cost = typeof addresses === "string" ? 1 : addresses.length;
    const refusal = admission.charge(c, c.get("caller"), cost);
    return refusal instanceof Promise
      ? refusal.then((refusal) => answer(c, addresses, p, refusal))
      : answer(c, addresses, p, refusal);
  };
  const answer = (
    c: AppContext,
    addresses: string | string[],
    p: LookupRequest,
    refusal: AppError | null,
  ) => {
    if (refusal) throw refusal;
    // One data set for a whole list, even if a reload swaps it meanwhile.
    const find = current(c).lookup;
    const data = typeof addresses === "string"
      ? find(addresses, p)
      : addresses.map((ip) => lookupItem(ip, p, find));
    return c.body(renderLookup(data, p.selection, p.format), 200, FORMAT_HEADERS[p.format]);
  };
  const siteResponse = (c: AppContext, answer: SiteAnswer) =>
    answer.body === null
      ? c.body(null, answer.status as 304, answer.headers)
      : c.body(answer.body, answer.status as 200, answer.headers);

  return {
    "/ip/{ip}": (c) => {
      const ip = c.req.param("ip");
      if (!ip) throw new BadRequestError("Missing IP address: use /ip/{ip}");
      return lookup(c, ip);
    },
    "/me": (c) => lookup(c, null),
    // Forward-auth: the caller (as /me reads it) judged by the policy; one unit per decision.
    "/auth": async (c) => {
      const gate = deps.policy;
      if (!gate) throw new AppError("not_found", NO_POLICY_MESSAGE);
      const address = client(c);
      const served = current(c); // 503 while loading, before a unit is charged
      const refusal = await admission.charge(c, c.get("caller"), 1);
      if (refusal) throw refusal;
      // A Response of its own (made once per distinct answer, then cloned): building
      // its several headers costs more than the decision.
      return gate.respond(served, address);
    },
    // Up to IPINTEL_BULK_MAX addresses answered whole; a longer list, or NDJSON, streamed.
    "/bulk/{ip_list}": (c) => {
      const list = c.req.param("ip_list");
      if (!list) {
        throw new BadRequestError("Empty bulk list: use /bulk/{ip},{ip},... or POST /bulk");
      }
      const ips = splitBulkList(list);
      const format = streamFormat(c.req.query("format"), c.req.header("accept") ?? null);
      if (format !== "ndjson" && ips.length <= deps.config.bulkMax) return lookup(c, ips);
      const p = readLookupQuery(c);
      return streamListAnswer(c, ips, { ...p, format }, h.streamDeps(c));
    },
    // A body of any length, read as the answer is written (src/service/http/bulk_stream.ts).
    "/bulk": (c) => {
      const p = readLookupQuery(c);
      const format = streamFormat(c.req.query("format"), c.req.header("accept") ?? null);
      const input = bodyFormat(c.req.raw.headers);
      const streamDeps = h.streamDeps(c);
      return streamBodyAnswer(c, bodyStream(c), input, { ...p, format }, streamDeps);
    },
    // An AS: parameters (400), one unit charged (429), then the answer (400/404 for the number).
    "/asn/{n}": async (c) => {
      const format = parseFormat(c.req.query("format"));
      const selection = parseAsnSelection(c.req.query("get"));
      const refusal = await admission.charge(c, c.get("caller"), 1);
      if (refusal) throw refusal;
      const n = c.req.param("n") ?? "";
      const answer = await asnView.answer(n, current(c).data, selection, format);
      return c.body(answer.body, 200, FORMAT_HEADERS[format]);
    },
    // The lookup page for a browser, /me for everyone else (as ifconfig.co does).
    "/": (c) => {
      c.header("vary", "Accept");
      if (site && acceptsHtml(c.req.header("accept") ?? null)) {
        return siteResponse(c, site.page(c.req.raw));
      }
      identifyByKey(admission, c);
      return lookup(c, null);
    },
    "/assets/{name}": (c) => {
      const asset = site?.asset(c.req.param("name") ?? "", c.req.raw);
      if (!asset) throw new AppError("not_found", "No such asset: see / for the page");
      return siteResponse(c, asset);
    },
    // Liveness: the process answers. Readiness: the data is loaded and every check passes.
    "/health": (c) => c.body(HEALTH_BODY, 200, FORMAT_HEADERS.json),
    "/ready": async (c) => {
      const data = c.get("served")?.data;
      const reason = data
        ? data.incomplete ?? await deps.ready?.() ?? null
        : "data is not loaded yet";
      if (!data || reason !== null) {
        const body = JSON.stringify({ success: false, message: `Not ready: ${reason}` });
        return c.body(body, 503, NO_STORE_JSON);
      }
      let body = readyBodies.get(data);
      if (!body) {
        const ready = readyData(data, deps.config.statusDetail ?? false);
        readyBodies.set(data, body = JSON.stringify({ success: true, data: ready }));
      }
      return c.body(body, 200, NO_STORE_JSON);
    },
    "/status": statusRoute(deps.dataDirectory, undefined, deps.policy ?? null, {
      detail: deps.config.statusDetail ?? false,
    }),
    "/metrics": (c) => {
      const metrics = deps.metrics;
      if (!metrics) throw new AppError("not_found", "No metrics: IPINTEL_METRICS is off");
      if (
        metrics.token !== null &&
        !bearerMatches(c.req.header("authorization") ?? null, metrics.token)
      ) {
        const headers = { ...FORMAT_HEADERS.json, "www-authenticate": 'Bearer realm="metrics"' };
        return c.body(renderError(METRICS_UNAUTHORIZED, "json").body, 401, headers);
      }
      return c.body(metrics.render(), 200, METRICS_HEADERS);
    },
    "/openapi.json": (c) => c.body(openApiBody, 200, FORMAT_HEADERS.json),
  };
}

const LOADING_MESSAGE = "Data is not loaded yet: try again shortly";
const NO_POLICY_MESSAGE =
  "No forward-auth policy: start the server with IPINTEL_POLICY (--policy) naming a policy file";
const HEALTH_BODY = JSON.stringify({ success: true, data: { status: "ok" } });
const NO_STORE_JSON = Object.freeze({ ...FORMAT_HEADERS.json, "cache-control": "no-store" });
const METRICS_HEADERS = Object.freeze({
  "content-type": METRICS_CONTENT_TYPE,
  "cache-control": "no-store",
});
const METRICS_UNAUTHORIZED =
  "Invalid or missing metrics token: send Authorization: Bearer <IPINTEL_METRICS_TOKEN>";

/** What `/ready` shows (open to probes): sources by scheme and host, unless IPINTEL_STATUS_DETAIL. */
function readyData(data: DataSet, detail: boolean): Json {
  return {
    status: "ready",
    databases: data.manifest.sources.map((s) => ({
      kind: s.kind,
      databaseType: s.databaseType,
      source: detail ? redactUrl(s.source) : sourceOrigin(s.source),
      built: s.built,
      license: s.license,
      attribution: s.attribution,
    })),
  };
}
