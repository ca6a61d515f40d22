/** `createApp(deps)`: the Hono application, assembled in one place. */

import { type Context, Hono, type Next } from "hono";
import { cors } from "hono/cors";
import { type AccessControl, assertAllowed, type Caller } from "../access/access.ts";
import type { RateDecision } from "../access/rate_limiter.ts";
import type { Config } from "../config.ts";
import {
  AppError,
  BadRequestError,
  DataUnavailableError,
  MethodNotAllowedError,
  quoteInput,
  RateLimitedError,
} from "../errors.ts";
import { applySelection, type OutputFormat, renderError, renderSuccess } from "../format/mod.ts";
import { CONTENT_TYPES, type Rendered } from "../format/render.ts";
import { bulkEnvelopeJson, resultEnvelopeJson } from "../format/result_json.ts";
import type { DataSet } from "../sources/data_set.ts";
import type { Json, LookupResult } from "../types.ts";
import { apiKeyOf, rateLimitHeaders } from "./access.ts";
import { lookupItem } from "../bulk/stream.ts";
import { streamFormat } from "../format/stream.ts";
import {
  bodyFormat,
  type BulkStreamDeps,
  streamBodyAnswer,
  streamListAnswer,
} from "./bulk_stream.ts";
import { createClientAddressResolver } from "./client_address.ts";
import {
  type LookupRequest,
  readLookupQuery,
  requestFormat,
  splitBulkList,
  withLookupBody,
  withLookupRequest,
} from "./lookup_request.ts";
import { OPENAPI_DOCUMENT } from "./openapi.ts";
import { checkRequest, requestTarget, targetFormat, targetPath } from "./request_target.ts";
import { STATUS_BY_CODE } from "./status.ts";
import { registerStatusRoute } from "./status_route.ts";
import { bearerMatches } from "../ops/bearer.ts";
import { METRICS_CONTENT_TYPE } from "../ops/metrics.ts";
import { acceptsHtml, createSite } from "../web/site.ts";
import type { ServiceSlot } from "./service_slot.ts";

export type { ServiceSlot };

export interface AppDeps {
  services: ServiceSlot;
  config:
    & Pick<Config, "bulkMax" | "trustedProxies" | "forwardedHeader" | "corsOrigins">
    & Partial<Pick<Config, "web">>;
  /** Keys and rate limits; without it the API is open (as with IPINTEL_AUTH=off). */
  access?: AccessControl;
  /** Where 5xx details go (with the request, for its id); the client only sees a generic message. */
  logError?: (error: unknown, request?: Request) => void;
  /** Readiness beyond the data being loaded (the KV answering...): null when ready, else why not. */
  ready?: () => Promise<string | null>;
  /** Serves `GET /metrics` (absent: no such route); with a token, only to `Bearer <token>`. */
  metrics?: { render: () => string; token: string | null };
}

/**
 * Deno.serve and the node:http server both pass the TCP peer as Hono's `env`;
 * `caller` is set by the authentication step, `rate` once the request is charged.
 */
type Env = {
  Bindings: { remoteAddr?: Deno.NetAddr };
  Variables: { caller: Caller | null; rate: RateDecision | undefined };
};

/** Builds the app; bad configuration (e.g. a trusted-proxy CIDR) throws here, at start-up. */
export function createApp(deps: AppDeps): Hono<Env> {
  const { services, config } = deps;
  const logError = deps.logError ?? ((error) => console.error(error));
  const clientAddress = createClientAddressResolver(config);
  const readyBodies = new WeakMap<DataSet, string>();
  const openApiBody = JSON.stringify(OPENAPI_DOCUMENT);
  const app = new Hono<Env>();

  // First, before any route reads the URL: refuse a forged Host, a method no
  // route serves, a target that is not a path (see request_target.ts).
  app.use("*", async (c, next) => {
    const target = requestTarget(c.req.raw);
    const problem = checkRequest(c.req.method, c.req.header("host") ?? null, target);
    if (problem) return fail(c, problem, targetFormat(target));
    await (c.req.method === "HEAD" ? withBodyLength(c, next) : next());
    return undefined;
  });

  const anyOrigin = config.corsOrigins.includes("*");
  // Hono's cors() builds a Response and Headers per request, about 40% of
  // throughput. With any origin allowed, the header is constant: it goes into
  // the precomputed response headers, and cors() only answers preflights.
  const allowMethods = (_origin: string, c: Context) => methodsServed(c.req.path);
  if (anyOrigin) app.options("*", cors({ origin: "*", allowMethods }));
  else app.use("*", cors({ origin: [...config.corsOrigins], allowMethods }));
  const headers = (contentType: string): Record<string, string> =>
    anyOrigin
      ? { "content-type": contentType, "access-control-allow-origin": "*" }
      : { "content-type": contentType };
  const headersByType = new Map(
    Object.values(CONTENT_TYPES).map((type) => [type, headers(type)]),
  );
  const jsonHeaders = headers(CONTENT_TYPES.json);
  /** The response headers: constant ones, plus the RateLimit headers once a request is charged. */
  const headersFor = (c: Context<Env>, contentType: string): Record<string, string> => {
    const base = headersByType.get(contentType) ?? headers(contentType);
    const rate = c.get("rate");
    return rate ? { ...base, ...rateLimitHeaders(rate) } : base;
  };
  const send = (c: Context<Env>, status: number, rendered: Rendered) =>
    c.body(rendered.body, status as 200, headersFor(c, rendered.contentType));

  /**
   * Who is calling (401 for a missing or wrong key where one is needed); the
   * first step of every lookup route. A plain call, not middleware, so that a
   * lookup without a body is still answered synchronously.
   */
  const access = deps.access;
  const authenticate = (c: Context<Env>) => {
    const key = apiKeyOf(c.req.query("apiKey"), c.req.raw.headers);
    const client = () => clientAddress(peerOf(c), c.req.raw.headers);
    c.set("caller", access?.identify(key, client) ?? null);
  };

  /** Charges `cost` units to the caller, then answers; 429 when it does not fit. */
  const charged = (
    c: Context<Env>,
    cost: number,
    answer: () => Response,
  ): Response | Promise<Response> => {
    const caller = c.get("caller") ?? null;
    const proceed = (decision: RateDecision | null) => {
      if (decision) {
        c.set("rate", decision);
        assertAllowed(caller!, decision, cost);
      }
      return answer();
    };
    const decision = access ? access.tryCharge(caller, cost) : null;
    return decision === undefined ? access!.charge(caller, cost).then(proceed) : proceed(decision);
  };

  // Liveness: the process answers. Readiness: the data is loaded and every check passes.
  app.get("/health", (c) => c.body(HEALTH_BODY, 200, jsonHeaders));
  app.get("/ready", async (c) => {
    const data = services.current?.data;
    const reason = data ? await deps.ready?.() ?? null : "data is not loaded yet";
    if (!data || reason !== null) {
      const body = JSON.stringify({ success: false, message: `Not ready: ${reason}` });
      return c.body(body, 503, { ...jsonHeaders, "cache-control": "no-store" });
    }
    let body = readyBodies.get(data);
    if (!body) {
      readyBodies.set(data, body = JSON.stringify({ success: true, data: readyData(data) }));
    }
    return c.body(body, 200, { ...jsonHeaders, "cache-control": "no-store" });
  });
  const metrics = deps.metrics;
  if (metrics) {
    app.get("/metrics", (c) => {
      if (
        metrics.token !== null &&
        !bearerMatches(c.req.header("authorization") ?? null, metrics.token)
      ) {
        const rendered = renderError(METRICS_UNAUTHORIZED, "json");
        return c.body(rendered.body, 401, {
          ...headersFor(c, rendered.contentType),
          "www-authenticate": 'Bearer realm="metrics"',
        });
      }
      return c.body(metrics.render(), 200, {
        "content-type": METRICS_CONTENT_TYPE,
        "cache-control": "no-store",
      });
    });
  }
  app.get("/openapi.json", (c) => c.body(openApiBody, 200, jsonHeaders));
  registerStatusRoute(app, services, jsonHeaders);

  // `[\s\S]`, not `.`: an encoded line break (%0A, %E2%80%A8) must reach the
  // route and fail as an invalid address, not fall through to "No route".
  app.get("/ip/:ip{[\\s\\S]+}", (c) => {
    authenticate(c);
    return withLookupRequest(c, (request) => one(c, request, c.req.param("ip")));
  });
  // The way to send a user-agent body on Deno.serve, which drops GET bodies.
  app.post("/ip/:ip{[\\s\\S]+}", (c) => {
    authenticate(c);
    return withLookupBody(c, (request) => one(c, request, c.req.param("ip")));
  });
  for (const path of ["/ip", "/ip/"]) {
    app.get(path, (c) => fail(c, new BadRequestError("Missing IP address: use /ip/{ip}")));
  }

  const me = (c: Context<Env>) => {
    authenticate(c);
    const ip = clientAddress(peerOf(c), c.req.raw.headers);
    return withLookupRequest(c, (request) => one(c, request, ip));
  };
  app.get("/me", me);

  // `/`: the lookup page for a browser, /me for everyone else (as ifconfig.co does).
  const site = config.web === false ? null : createSite({ bulkMax: config.bulkMax });
  app.get("/", (c) => {
    c.header("vary", "Accept");
    if (site && acceptsHtml(c.req.header("accept") ?? null)) {
      return site.page(c.req.raw);
    }
    return me(c);
  });
  app.get("/assets/:name", (c) => {
    const asset = site?.asset(c.req.param("name"), c.req.raw);
    return asset ?? c.notFound();
  });

  app.get("/bulk/:list{[\\s\\S]+}", (c) => {
    authenticate(c);
    return withLookupRequest(c, (request) => {
      const ips = splitBulkList(c.req.param("list"));
      const format = streamFormat(c.req.query("format"), c.req.header("accept") ?? null);
      if (format === "ndjson" || ips.length > config.bulkMax) {
        return streamListAnswer(ips, { ...request, format }, bulkStreamDeps(c));
      }
      return many(c, request, ips);
    });
  });
  for (const path of ["/bulk", "/bulk/"]) {
    app.get(path, (c) => fail(c, new BadRequestError("Empty bulk list: use /bulk/{ip},{ip},...")));
  }

  // Streamed bulk (issue 22, src/http/bulk_stream.ts): POST /bulk always streams; a
  // GET list streams past IPINTEL_BULK_MAX or in NDJSON.
  app.post("/bulk", (c) => {
    authenticate(c);
    const request = readLookupQuery(c);
    const format = streamFormat(c.req.query("format"), c.req.header("accept") ?? null);
    const bodyType = bodyFormat(c.req.raw.headers);
    return streamBodyAnswer(c.req.raw.body, bodyType, { ...request, format }, bulkStreamDeps(c));
  });
  const bulkStreamDeps = (c: Context<Env>): BulkStreamDeps => {
    const current = services.current;
    if (!current) throw new DataUnavailableError(LOADING_MESSAGE);
    return {
      lookup: current.lookup,
      access,
      caller: c.get("caller") ?? null,
      headers: (type) => headersFor(c, type),
      rated: (decision) => c.set("rate", decision),
      logError: (error) => logError(error, c.req.raw),
    };
  };

  app.notFound((c) => {
    const path = targetPath(requestTarget(c.req.raw));
    const message = `No route for ${c.req.method} ${quoteInput(path)}: see /openapi.json`;
    return send(c, 404, renderError(message, requestFormat(c)));
  });

  app.onError((error, c) => fail(c, error));

  function lookup(ip: string, request: LookupRequest): LookupResult {
    if (!services.current) throw new DataUnavailableError(LOADING_MESSAGE);
    return services.current.lookup(ip, request);
  }

  function one(c: Context<Env>, request: LookupRequest, ip: string) {
    return charged(c, 1, () => {
      const result = lookup(ip, request);
      if (request.format === "json" && request.selection === null) {
        // The common case, with its own serialiser (see result_json.ts).
        return c.body(resultEnvelopeJson(result), 200, headersFor(c, CONTENT_TYPES.json));
      }
      return send(c, 200, renderSuccess(applySelection(result, request.selection), request.format));
    });
  }

  function many(c: Context<Env>, request: LookupRequest, ips: string[]) {
    if (ips.length === 0) {
      throw new BadRequestError("Empty bulk list: give at least one IP address");
    }
    // One unit per address; the whole call is refused when they do not all fit.
    return charged(c, ips.length, () => {
      // One data set for the whole list, even if a reload swaps it meanwhile.
      const current = services.current;
      if (!current) throw new DataUnavailableError(LOADING_MESSAGE);
      const items = ips.map((ip) => lookupItem(ip, request, current.lookup));
      if (request.format === "json" && request.selection === null) {
        // The common case, with its own serialiser (see result_json.ts).
        return c.body(bulkEnvelopeJson(items), 200, headersFor(c, CONTENT_TYPES.json));
      }
      const responseArray: Json[] = items.map((item) => applySelection(item, request.selection));
      return send(c, 200, renderSuccess({ responseArray }, request.format));
    });
  }

  function fail(c: Context<Env>, error: unknown, format: OutputFormat = requestFormat(c)) {
    if (error instanceof MethodNotAllowedError) c.header("allow", error.allow.join(", "));
    if (error instanceof RateLimitedError) {
      const rendered = renderError(error.message, format);
      return c.body(rendered.body, 429, {
        ...headersFor(c, rendered.contentType),
        "retry-after": String(error.retryAfterSeconds),
      });
    }
    if (error instanceof AppError) {
      return send(c, STATUS_BY_CODE[error.code], renderError(error.message, format));
    }
    logError(error, c.req.raw);
    return send(c, 500, renderError("Internal server error", format));
  }

  return app;
}

/** The TCP peer, as both servers pass it. */
function peerOf(c: Context<Env>): string {
  const peer = c.env?.remoteAddr?.hostname;
  if (!peer) throw new Error("The server did not provide the peer address");
  return peer;
}

/**
 * Runs a HEAD as the GET (Hono does) and states the GET body's length, which
 * Hono drops with the body: HEAD answers with exactly the GET's headers.
 */
async function withBodyLength(c: Context, next: Next): Promise<void> {
  await next();
  const length = (await c.res.clone().arrayBuffer()).byteLength;
  c.res.headers.set("content-length", String(length));
}

/** The methods a path is served with, for the CORS preflight. */
function methodsServed(path: string): string[] {
  return path === "/bulk" || path.startsWith("/ip/") ? ["GET", "HEAD", "POST"] : ["GET", "HEAD"];
}

const LOADING_MESSAGE = "Data is not loaded yet: try again shortly";

const HEALTH_BODY = JSON.stringify({ success: true, data: { status: "ok" } });
const METRICS_UNAUTHORIZED =
  "Invalid or missing metrics token: send Authorization: Bearer <IPINTEL_METRICS_TOKEN>";

function readyData(data: DataSet): Json {
  return {
    status: "ready",
    databases: data.manifest.sources.map((s) => ({
      kind: s.kind,
      databaseType: s.databaseType,
      source: s.source,
      built: s.built,
      license: s.license,
      attribution: s.attribution,
    })),
  };
}
