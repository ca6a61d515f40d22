/**
 * The route table: every path the server answers, once. It drives routing
 * (pipeline.ts, through Hono's router), `Allow` and 405s, the CORS
 * preflight's methods, the OpenAPI document's paths (openapi.ts), and the
 * route label of metrics and access logs (never the URL: no address, no
 * `apiKey`, a bounded set of values).
 *
 * Adding a route: one entry here, one handler in app.ts (`HANDLERS` must have
 * one per path) and its operations in openapi.ts (likewise checked).
 */

import { RegExpRouter } from "hono/router/reg-exp-router";

/** A method a route can serve; HEAD (as GET, without the body) and OPTIONS come with every route. */
export type RouteMethod = "GET" | "POST";

export interface RouteSpec {
  /** The pattern as OpenAPI writes it: exact, or one `{param}` as the last segment. */
  readonly path: string;
  readonly methods: readonly RouteMethod[];
  /** The paths the OpenAPI document shows for this route, where they are not just `path`. */
  readonly documents?: readonly string[];
}

export const ROUTES = [
  { path: "/ip/{ip}", methods: ["GET", "POST"] },
  { path: "/me", methods: ["GET"] },
  { path: "/bulk/{ip_list}", methods: ["GET"] },
  { path: "/bulk", methods: ["POST"] },
  { path: "/", methods: ["GET"] },
  { path: "/assets/{name}", methods: ["GET"] },
  { path: "/health", methods: ["GET"] },
  { path: "/ready", methods: ["GET"] },
  { path: "/status", methods: ["GET"] },
  { path: "/metrics", methods: ["GET"] },
  { path: "/openapi.json", methods: ["GET"] },
  // The compatible APIs (src/compat): MaxMind GeoIP2, ipinfo, ip-api.
  { path: "/geoip/v2.1/country/{ip}", methods: ["GET"] },
  { path: "/geoip/v2.1/city/{ip}", methods: ["GET"] },
  { path: "/geoip/v2.1/insights/{ip}", methods: ["GET"] },
  {
    path: "/ipinfo/{path}",
    methods: ["GET", "POST"],
    documents: ["/ipinfo", "/ipinfo/{ip}", "/ipinfo/{ip}/{field}", "/ipinfo/batch"],
  },
  { path: "/json/{ip}", methods: ["GET"], documents: ["/json", "/json/{ip}"] },
  { path: "/batch", methods: ["POST"] },
] as const satisfies readonly RouteSpec[];

export type RoutePath = typeof ROUTES[number]["path"];

/** The paths the OpenAPI document shows for a route. */
export function documentedPaths(route: RouteSpec): readonly string[] {
  return route.documents ?? [route.path];
}

/** The label of a request no route serves. */
export const UNMATCHED = "unmatched";

/** Every route label (the route paths, then `unmatched`), indexed as {@link routeIndex} gives them. */
export const ROUTE_LABELS: readonly string[] = [...ROUTES.map((r) => r.path), UNMATCHED];

/** Every method some route answers: the table's, HEAD and OPTIONS. */
export const SERVED_METHODS: readonly string[] = [
  ...new Set(["GET", "HEAD", ...ROUTES.flatMap((r) => r.methods), "OPTIONS"]),
];

/** The methods a route answers, as `Allow` lists them. */
export function allowedMethods(route: RouteSpec): string[] {
  const methods: string[] = [...route.methods];
  if (methods.includes("GET")) methods.splice(1, 0, "HEAD");
  return [...methods, "OPTIONS"];
}

/**
 * Hono's RegExpRouter routes by path only (methods, 405 and `Allow` are the
 * pipeline's, from the table). Exact routes are registered first, so where an
 * exact path and a `{param}` route both match (`/bulk`), the exact one comes
 * first. A `{param}` route is Hono's trailing wildcard (`/ip/*` matches `/ip`,
 * `/ip/` and any rest, slashes and line breaks included); its param is the raw
 * rest after the prefix, so nothing is decoded here. Chosen by
 * bench/route_bench.ts: about 5x faster than TrieRouter and 3x than
 * PatternRouter, which also takes `/me/` for `/me`.
 */
const ROUTER = new RegExpRouter<{ index: number; prefix: string }>();
const table: readonly RouteSpec[] = ROUTES;
for (const exact of [true, false]) {
  table.forEach((route, index) => {
    const brace = route.path.indexOf("{");
    if ((brace === -1) !== exact) return;
    const prefix = exact ? route.path : route.path.slice(0, brace);
    ROUTER.add("ALL", exact ? prefix : `${prefix}*`, { index, prefix });
  });
}
ROUTER.match("ALL", "/"); // Builds the matcher now: a table Hono cannot route fails at load.

/**
 * The route serving `path` (the raw path, without the query), as its index in
 * {@link ROUTES} and the raw (still percent-encoded) `{param}`; or null. An
 * exact route wins; a `{param}` route takes any rest after its prefix, and
 * also its prefix without the final slash (`/ip` and `/ip/` are `/ip/{ip}`
 * with an empty address: its handler says what is missing).
 *
 * @example matchRoute("/ip/8.8.8.8") // { index: 0, param: "8.8.8.8" }
 */
export function matchRoute(path: string): { index: number; param: string } | null {
  const route = ROUTER.match("ALL", path)[0][0]?.[0];
  if (route === undefined) return null;
  return { index: route.index, param: path.slice(route.prefix.length) };
}

/**
 * The index in {@link ROUTE_LABELS} of the route serving `url` (an absolute
 * URL, as `Request.url` gives it; a forged Host cannot reach here: both
 * servers refuse it first).
 *
 * @example ROUTE_LABELS[routeIndex("http://localhost:8000/ip/8.8.8.8?apiKey=x")] // "/ip/{ip}"
 */
export function routeIndex(url: string): number {
  if (url === lastRouted.url) return lastRouted.index;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return ROUTES.length;
  let end = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  if (hash !== -1 && (end === -1 || hash < end)) end = hash;
  return matchRoute(url.slice(start, end === -1 ? url.length : end))?.index ?? ROUTES.length;
}

/**
 * The URL the pipeline routed last and its route: the instrumentation asks for
 * the label of the same request right after it is answered, and gets it
 * without routing again (any request with this URL has this route).
 */
const lastRouted = { url: "", index: 0 };

/** Remembers the route the pipeline found for `url` (see {@link routeIndex}). */
export function rememberRoute(url: string, index: number): void {
  lastRouted.url = url;
  lastRouted.index = index;
}
