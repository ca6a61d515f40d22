/**
 * The route pattern of a request URL (`/ip/{ip}`, never `/ip/8.8.8.8`): the
 * label of metrics and access logs, so neither holds an address, a query
 * (`apiKey=...`) or an unbounded number of distinct values.
 */

import { COMPAT_ROUTE_LABELS, compatRouteLabel } from "../compat/labels.ts";

/** Every label a request can get; `unmatched` is any path no route serves. */
export const ROUTES = [
  "/ip/{ip}",
  "/ip",
  "/me",
  "/bulk/{ip_list}",
  "/bulk",
  "/health",
  "/ready",
  "/metrics",
  "/status",
  "/openapi.json",
  "/",
  "/assets/{name}",
  // The compatible APIs (src/compat/labels.ts).
  ...COMPAT_ROUTE_LABELS,
  "unmatched",
] as const;

export type Route = typeof ROUTES[number];

const EXACT = new Map<string, number>([
  ["/ip", 1],
  ["/ip/", 1],
  ["/me", 2],
  ["/bulk", 4],
  ["/bulk/", 4],
  ["/health", 5],
  ["/ready", 6],
  ["/metrics", 7],
  ["/status", 8],
  ["/openapi.json", 9],
  ["/", 10],
]);
const UNMATCHED = ROUTES.length - 1;
const COMPAT_START = UNMATCHED - COMPAT_ROUTE_LABELS.length;

/**
 * The index in {@link ROUTES} of the route serving `url` (an absolute URL, as
 * `Request.url` gives it). Allocates only for paths other than `/ip/...` and
 * `/bulk/...`.
 *
 * @example ROUTES[routeIndex("http://localhost:8000/ip/8.8.8.8?apiKey=x")] // "/ip/{ip}"
 */
export function routeIndex(url: string): number {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return UNMATCHED;
  let end = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  if (hash !== -1 && (end === -1 || hash < end)) end = hash;
  if (end === -1) end = url.length;
  if (end - start > 4 && url.startsWith("/ip/", start)) return 0;
  if (end - start > 6 && url.startsWith("/bulk/", start)) return 3;
  if (end - start > 8 && url.startsWith("/assets/", start)) return 11;
  const exact = EXACT.get(url.slice(start, end));
  if (exact !== undefined) return exact;
  const compat = compatRouteLabel(url.slice(start, end));
  return compat === -1 ? UNMATCHED : COMPAT_START + compat;
}
