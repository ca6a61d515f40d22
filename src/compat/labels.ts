/**
 * The labels of the compatible APIs' routes for metrics and access logs (a
 * pattern, never an address), and the one function that names a path with
 * them; src/ops/route.ts appends them to its own. No imports: ops stays light.
 */

/** The labels compatible routes get, in the order src/ops/route.ts appends them. */
export const COMPAT_ROUTE_LABELS = [
  "/geoip/v2.1/country/{ip}",
  "/geoip/v2.1/city/{ip}",
  "/geoip/v2.1/insights/{ip}",
  "/ipinfo/{ip}",
  "/ipinfo/{ip}/{field}",
  "/ipinfo/batch",
  "/json/{ip}",
  "/batch",
  "/ipinfo",
  "/json",
] as const;

/**
 * The index in {@link COMPAT_ROUTE_LABELS} of a request path (without its
 * query), or -1 when no compatible route serves it.
 *
 * @example COMPAT_ROUTE_LABELS[compatRouteLabel("/ipinfo/8.8.8.8/city")] // "/ipinfo/{ip}/{field}"
 */
export function compatRouteLabel(path: string): number {
  if (path.startsWith("/geoip/v2.1/")) {
    const slash = path.indexOf("/", 12);
    if (slash === -1 || slash === path.length - 1) return -1;
    const service = ["country", "city", "insights"].indexOf(path.slice(12, slash));
    return service;
  }
  if (path === "/ipinfo") return 8;
  if (path === "/json") return 9;
  if (path.startsWith("/ipinfo/")) {
    if (path === "/ipinfo/batch") return 5;
    const segments = path.slice(8).split("/");
    if (segments.length === 1) return 3;
    return segments.length === 2 && segments[1] !== "" ? 4 : -1;
  }
  if (path.startsWith("/json/")) return 6;
  if (path === "/batch") return 7;
  return -1;
}
