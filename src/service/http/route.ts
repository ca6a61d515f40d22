/**
 * A route, declared once: its path, methods, who may call it, its label, its
 * OpenAPI operations and its handler. From the declarations the app
 * (src/service/app/app.ts) registers the handlers on Hono, reads the key
 * before a keyed route's handler, answers OPTIONS and the 405s with the
 * route's own methods, labels metrics and access logs (never the URL: no
 * address, no `apiKey`, a bounded set of values), and writes the OpenAPI
 * document's `paths`.
 */

import type { Admission } from "./admission.ts";
import type { AppContext, ErrorLog, Served } from "./env.ts";

/** A method a route can serve; HEAD (as GET, without the body) and OPTIONS come with every route. */
export type RouteMethod = "GET" | "POST";

/** A route's handler: the request's context in, its answer out. */
export type Handler = (c: AppContext) => Response | Promise<Response>;

/** The OpenAPI path item of a route: its operations by lower-case method, and shared parameters. */
export type PathItem = Readonly<Record<string, unknown>>;

export interface Route<T extends RouteTools = RouteTools> {
  /**
   * The path as OpenAPI writes it: exact, or with `{param}` segments. The last
   * `{param}` takes the rest of the path, slashes included (`/ip/1.2.3.0/24`
   * is one address that its handler refuses, not a missing route), unless
   * `param` is "segment".
   */
  readonly path: string;
  readonly methods: readonly RouteMethod[];
  /**
   * Who may call: "key", the native API key identifies the caller before the
   * handler runs (401 when it is wrong, or missing where one is required);
   * "own", the handler identifies the caller by its API's own credentials (a
   * compatible API); "open", anyone (probes, the page, the document).
   */
  readonly access: "key" | "own" | "open";
  /**
   * The label of its requests in metrics and access logs, and the family
   * whose methods a 405 lists and whose preflight answers: the path, unless
   * several routes make one API (ipinfo's paths are `/ipinfo/{path}`).
   */
  readonly family?: string;
  /** How the last `{param}` matches: the rest of the path ("rest", the default) or one segment. */
  readonly param?: "rest" | "segment";
  /**
   * Whether the path without its last `{param}` (`/ip`, `/ip/`) reaches the
   * handler, which then says what is missing; for an exact path, whether its
   * form with a final slash does. Default: yes with a `{param}`, no without.
   */
  readonly empty?: boolean;
  /** Its OpenAPI operations (`/openapi.json`). */
  readonly doc: PathItem;
  /** Makes the handler, once, when the app is built. */
  handler(tools: T): Handler;
}

/** What every handler may use, made once when the app is built. */
export interface RouteTools {
  /** Keys and limits: who calls, and whether a request's cost fits their limit. */
  admission: Admission;
  /** The caller's address (trusted proxies applied), resolved once per request. */
  client(c: AppContext): string;
  /** The data set pinned for the request; a 503 while the data is still loading. */
  served(c: AppContext): Served;
  /** Most addresses in one answer that is not streamed (IPINTEL_BULK_MAX). */
  bulkMax: number;
  /** Where 5xx details go, with the request's id. */
  logError: ErrorLog;
}

/** A route's label (see {@link Route.family}). */
export function familyOf(route: Route): string {
  return route.family ?? route.path;
}

/** The label of a request no route serves. */
export const UNMATCHED = "unmatched";

/** Every route label, in the order of the routes, then `unmatched`: the bounded label values. */
export function routeLabels(routes: readonly Route[]): string[] {
  return [...new Set(routes.map(familyOf)), UNMATCHED];
}

/** The methods a family answers, as `Allow` lists them (HEAD after GET, OPTIONS last). */
export function allowedMethods(methods: readonly RouteMethod[]): string[] {
  const listed: string[] = (["GET", "POST"] as const).filter((m) => methods.includes(m));
  if (listed.includes("GET")) listed.splice(1, 0, "HEAD");
  return [...listed, "OPTIONS"];
}

/** The methods of every route of `family`. */
export function familyMethods(routes: readonly Route[], family: string): RouteMethod[] {
  return [...new Set(routes.filter((r) => familyOf(r) === family).flatMap((r) => r.methods))];
}

/**
 * The Hono patterns a route's handler is registered on (see {@link Route.path}
 * and {@link Route.empty}); a path without its `{param}` that another route
 * declares exactly is left to that route.
 *
 * @example handlerPatterns(ip, routes) // ["/ip", "/ip/", "/ip/:ip{.+}"]
 */
export function handlerPatterns(route: Route, routes: readonly Route[]): string[] {
  const last = /\{(\w+)\}$/.exec(route.path);
  const hono = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");
  if (!last) return route.empty ? [route.path, `${route.path}/`] : [route.path];
  const prefix = route.path.slice(0, last.index);
  const name = last[1]!;
  const rest = route.param === "segment" ? `:${name}` : `:${name}{.+}`;
  const patterns = [`${hono(prefix)}${rest}`];
  if (route.empty ?? true) {
    const bare = prefix.slice(0, -1);
    const exact = routes.some((r) => r.path === bare);
    patterns.unshift(...(exact ? [] : [bare]), prefix);
  }
  return patterns;
}

/**
 * The one Hono pattern covering every path of a family: the path, or the
 * prefix before its first `{param}` and any rest (`/ipinfo/*` takes `/ipinfo`
 * too). Its preflight and its 405/404 fallback are registered on it.
 */
export function familyPattern(family: string): string {
  const brace = family.indexOf("{");
  return brace === -1 ? family : `${family.slice(0, brace)}*`;
}
