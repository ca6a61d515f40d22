/**
 * The route table: every path the server answers, once. It drives the Hono
 * registrations (app.ts), `Allow` and 405s, the CORS preflight's methods, the
 * OpenAPI document's paths (openapi.ts), and the route label of metrics and
 * access logs (never the URL: no address, no `apiKey`, a bounded set of values).
 *
 * Adding a route: one entry here, one handler in app.ts (`handlers` must have
 * one per path) and its operations in openapi.ts (likewise checked).
 */

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
  { path: "/auth", methods: ["GET"] },
  { path: "/bulk/{ip_list}", methods: ["GET"] },
  { path: "/bulk", methods: ["POST"] },
  { path: "/asn/{n}", methods: ["GET"] },
  { path: "/", methods: ["GET"] },
  { path: "/assets/{name}", methods: ["GET"] },
  { path: "/health", methods: ["GET"] },
  { path: "/ready", methods: ["GET"] },
  { path: "/status", methods: ["GET"] },
  { path: "/metrics", methods: ["GET"] },
  { path: "/openapi.json", methods: ["GET"] },
  // The compatible APIs (src/service/compat): MaxMind GeoIP2, ipinfo, ip-api. Each entry is a family:
  // app.ts registers the family's own routes (src/service/compat/routes.ts) under it.
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

/** Every route label (the route paths, then `unmatched`), as metrics index them. */
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

/** The name of a route's `{param}`, or null for an exact route. */
export function paramName(route: RouteSpec): string | null {
  return /\{(\w+)\}$/.exec(route.path)?.[1] ?? null;
}

/**
 * The Hono patterns a route's handler is registered on. An exact route is its
 * path. A `{param}` route takes any non-empty rest after its prefix, slashes
 * included (`/ip/1.2.3.0/24` is one address that its handler refuses, not a
 * missing route), and its prefix with and without the final slash, with no
 * param (`/ip`, `/ip/`: its handler says what is missing), unless an exact
 * route owns that path (`/bulk` is the POST route, not an empty `/bulk/{ip_list}`).
 *
 * @example handlerPatterns(ROUTES[0]) // ["/ip", "/ip/", "/ip/:ip{.+}"]
 */
export function handlerPatterns(route: RouteSpec): string[] {
  const name = paramName(route);
  if (name === null) return [route.path];
  const prefix = route.path.slice(0, route.path.indexOf("{"));
  const bare = prefix.slice(0, -1);
  const exact = ROUTES.some((r) => r.path === bare);
  return [...(exact ? [] : [bare]), prefix, `${prefix}:${name}{.+}`];
}

/**
 * The one Hono pattern covering every path of a route (its family, for a
 * compatible API): the path, or the prefix and any rest (`/ipinfo/*` takes
 * `/ipinfo` too). Its preflight and its 405/404 fallback are registered on it.
 */
export function familyPattern(route: RouteSpec): string {
  const brace = route.path.indexOf("{");
  return brace === -1 ? route.path : `${route.path.slice(0, brace)}*`;
}
