/**
 * The request pipeline, framework-free: every request, on either server, goes
 * request → `ApiRequest` → route handler → `Answer` → Response, and every
 * rule on the way is applied here once: the request line and Host check,
 * routing and 405 (routes.ts), the route's handler (app.ts: auth, limits,
 * parameters, lookup, format), errors in the requested format, the RateLimit
 * headers, CORS and HEAD. A plain `GET /ip/{ip}` is answered synchronously
 * with constant header objects: that, not a second implementation, is the
 * fast path.
 */

import type { RateDecision } from "../access/rate_limiter.ts";
import {
  AppError,
  MethodNotAllowedError,
  quoteInput,
  RateLimitedError,
  STATUS_BY_CODE,
} from "../errors.ts";
import { CONTENT_TYPES, type OutputFormat, parseFormat, renderError } from "../format/render.ts";
import { markStreamedResponse } from "./streamed.ts";
import { checkRequest, requestTarget, targetFormat } from "./request_target.ts";
import {
  allowedMethods,
  matchRoute,
  rememberRoute,
  type RoutePath,
  ROUTES,
  type RouteSpec,
} from "./routes.ts";

/** What a route handler answers; the pipeline adds the headers every answer gets. */
export interface Answer {
  status: number;
  /** Frozen objects are shared constants (copied before anything is added); others are the answer's own. */
  headers: Record<string, string>;
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
}

export type Handler = (request: ApiRequest) => Answer | Promise<Answer>;

/** What both servers pass beside the request: the TCP peer, and node:http's GET body. */
export interface ServeEnv {
  remoteAddr?: Deno.NetAddr;
  getBody?: ReadableStream<Uint8Array> | null;
}

export type FetchHandler = (request: Request, env?: ServeEnv) => Response | Promise<Response>;

export interface PipelineOptions {
  /** One handler per route of the table. */
  handlers: { readonly [P in RoutePath]: Handler };
  /** IPINTEL_CORS_ORIGINS: `*` or a list of origins. */
  corsOrigins: readonly string[];
  /** Where 5xx details go; the client sees a generic message. */
  logError: (error: unknown, request: Request) => void;
}

/** The constant headers of a body in each format (frozen: shared by every answer). */
export const FORMAT_HEADERS: Readonly<Record<OutputFormat, Record<string, string>>> = {
  json: Object.freeze({ "content-type": CONTENT_TYPES.json }),
  xml: Object.freeze({ "content-type": CONTENT_TYPES.xml }),
  csv: Object.freeze({ "content-type": CONTENT_TYPES.csv }),
};

/** Builds the handler both servers run. */
export function createPipeline(options: PipelineOptions): FetchHandler {
  const handlers = ROUTES.map((route) => options.handlers[route.path]);
  const addCors = corsRule(options.corsOrigins);

  /** The Response for an answer: RateLimit headers once charged, CORS, HEAD without the body. */
  const finish = (request: Request, rate: RateDecision | null, answer: Answer): Response => {
    let headers = answer.headers;
    if (rate !== null) headers = { ...headers, ...rateLimitHeaders(rate) };
    headers = addCors(headers, request.headers);
    let body = answer.body;
    if (request.method === "HEAD" && body !== null) {
      if (body instanceof ReadableStream) body.cancel().catch(() => {});
      else headers = { ...headers, "content-length": String(byteLength(body)) };
      body = null;
    }
    // The status only when it is not 200: Deno.serve answers the plainest init fastest.
    const response = answer.status === 200
      ? new Response(body, { headers })
      : new Response(body, { status: answer.status, headers });
    if (body !== null && typeof body !== "string") markStreamedResponse(response, body);
    return response;
  };

  const fail = (
    request: Request,
    rate: RateDecision | null,
    format: OutputFormat,
    error: unknown,
  ) => finish(request, rate, errorAnswer(error, format, options.logError, request));

  return (request, env) => {
    const headers = request.headers;
    const host = headers.get("host");
    const target = requestTarget(request, host);
    const sent = request.method;
    const problem = checkRequest(host, target);
    if (problem) return fail(request, null, targetFormat(target), problem);
    // A fragment is never sent over the wire; an in-process URL may hold one.
    const hash = target.indexOf("#");
    const end = hash === -1 ? target.length : hash;
    let queryAt = target.indexOf("?");
    if (queryAt > end) queryAt = -1;
    const path = target.slice(0, queryAt === -1 ? end : queryAt);
    const match = matchRoute(path);
    rememberRoute(request.url, match?.index ?? ROUTES.length);
    if (match === null) {
      const error = new AppError(
        "not_found",
        `No route for ${sent} ${quoteInput(path)}: see /openapi.json`,
      );
      return fail(request, null, targetFormat(target), error);
    }
    const route: RouteSpec = ROUTES[match.index]!;
    const method = sent === "HEAD" ? "GET" : sent;
    if (method === "OPTIONS") return finish(request, null, preflight(route, headers));
    if (!(route.methods as readonly string[]).includes(method)) {
      const allow = allowedMethods(route);
      const error = new MethodNotAllowedError(
        `Method ${quoteInput(method)} is not allowed on ${route.path}: use ${allow.join(", ")}`,
        allow,
      );
      return fail(request, null, targetFormat(target), error);
    }
    const query = queryAt === -1 ? "" : target.slice(queryAt + 1, end);
    const req = new ApiRequest(request, headers, env, method, match.param, query);
    let answer;
    try {
      answer = handlers[match.index]!(req);
    } catch (error) {
      return fail(request, req.rate, req.format(), error);
    }
    if (answer instanceof Promise) {
      return answer.then(
        (answer) => finish(request, req.rate, answer),
        (error) => fail(request, req.rate, req.format(), error),
      );
    }
    return finish(request, req.rate, answer);
  };
}

/**
 * A request as the handlers see it: no framework object, the same on both
 * servers; what is beyond the method and the path is read when asked.
 */
export class ApiRequest {
  /** The route's `{param}`, percent-decoded ("" for none). */
  readonly param: string;
  /** The rate decision once the request is charged: its headers go on every answer after. */
  rate: RateDecision | null = null;
  #params: { get(name: string): string | null } | null = null;
  #format: OutputFormat | null = null;

  constructor(
    /** The Fetch request (the site reads its headers for caching). */
    readonly raw: Request,
    readonly headers: Headers,
    private readonly env: ServeEnv | undefined,
    /** GET for a HEAD (the pipeline drops the body); otherwise as sent. */
    readonly method: string,
    param: string,
    private readonly queryText: string,
  ) {
    this.param = param.includes("%") ? decodeOrKeep(param) : param;
  }

  /** A query parameter's first value, decoded; undefined when absent. */
  query(name: string): string | undefined {
    if (this.queryText === "") return undefined;
    this.#params ??= parseQuery(this.queryText);
    return this.#params.get(name) ?? undefined;
  }

  /** The output format asked for: successes and errors are rendered in it. */
  format(): OutputFormat {
    return this.#format ??= parseFormat(this.query("format"));
  }

  /** The body stream: the Fetch body, or a GET body the node:http server kept. */
  get body(): ReadableStream<Uint8Array> | null {
    return this.raw.body ?? this.env?.getBody ?? null;
  }

  /** The TCP peer's address; throws when the server did not give one. */
  peer(): string {
    const peer = this.env?.remoteAddr?.hostname;
    if (!peer) throw new Error("The server did not provide the peer address");
    return peer;
  }
}

/**
 * A query's parameters, first value of each name, as URLSearchParams reads
 * them. A query with nothing to decode (no `%`, no `+`: the usual
 * `format=xml&get=city`) is split directly, without its allocations.
 */
function parseQuery(text: string): { get(name: string): string | null } {
  if (/[%+]/.test(text)) return new URLSearchParams(text);
  const params = new Map<string, string>();
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const name = equals === -1 ? pair : pair.slice(0, equals);
    if (!params.has(name)) params.set(name, equals === -1 ? "" : pair.slice(equals + 1));
  }
  return { get: (name) => params.get(name) ?? null };
}

function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a malformed escape: the handler reports the text as given
  }
}

/** The error's answer: its status and message in `format`, 500 (logged, generic) when unexpected. */
function errorAnswer(
  error: unknown,
  format: OutputFormat,
  logError: PipelineOptions["logError"],
  request: Request,
): Answer {
  const status = error instanceof AppError ? STATUS_BY_CODE[error.code] : 500;
  if (status === 500) logError(error, request);
  const message = error instanceof AppError ? error.message : "Internal server error";
  const rendered = renderError(message, format);
  const headers: Record<string, string> = { "content-type": rendered.contentType };
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(", ");
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  return { status, headers, body: rendered.body };
}

/** The CORS preflight: the route's methods, the headers asked for. */
function preflight(route: RouteSpec, headers: Headers): Answer {
  const answer: Record<string, string> = {
    "access-control-allow-methods": allowedMethods(route).filter((m) => m !== "OPTIONS").join(","),
  };
  const asked = headers.get("access-control-request-headers");
  if (asked) {
    answer["access-control-allow-headers"] = asked.split(",").map((h) => h.trim()).join(",");
    answer.vary = "Access-Control-Request-Headers";
  }
  return { status: 204, headers: answer, body: null };
}

/**
 * The one CORS rule, for every answer: with `*`, `Access-Control-Allow-Origin: *`
 * (a constant header object gets its copy once); with a list, the request's
 * Origin when listed, and `Vary: Origin` always.
 */
function corsRule(
  origins: readonly string[],
): (headers: Record<string, string>, requestHeaders: Headers) => Record<string, string> {
  if (origins.includes("*")) {
    const withCors = new WeakMap<object, Record<string, string>>();
    return (headers) => {
      if (!Object.isFrozen(headers)) {
        headers["access-control-allow-origin"] = "*";
        return headers;
      }
      let copy = withCors.get(headers);
      if (copy === undefined) {
        withCors.set(
          headers,
          copy = Object.freeze({ ...headers, "access-control-allow-origin": "*" }),
        );
      }
      return copy;
    };
  }
  return (headers, requestHeaders) => {
    const origin = requestHeaders.get("origin");
    const out: Record<string, string> = {
      ...headers,
      vary: headers.vary ? `${headers.vary}, Origin` : "Origin",
    };
    if (origin !== null && origins.includes(origin)) out["access-control-allow-origin"] = origin;
    return out;
  };
}

const NON_ASCII = /[\u0080-\uffff]/;

function byteLength(body: string | Uint8Array): number {
  if (typeof body !== "string") return body.byteLength;
  return NON_ASCII.test(body) ? new TextEncoder().encode(body).byteLength : body.length;
}

/** `RateLimit-Limit`, `-Remaining` and `-Reset` for a decision (a 429 adds `Retry-After`). */
function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
}
