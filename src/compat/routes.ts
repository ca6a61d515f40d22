/**
 * Every compatible API's routes, and the one function that finds the route of
 * a request path. The app's route table (src/http/routes.ts) holds one entry
 * per family of these paths; its handler asks {@link matchCompatRoute} which
 * route of the family serves the path.
 */

import { IPAPI_ROUTES } from "./ipapi.ts";
import { IPINFO_ROUTES } from "./ipinfo.ts";
import { MAXMIND_ROUTES } from "./maxmind.ts";
import type { CompatRoute } from "./pipeline.ts";

export const COMPAT_ROUTES: readonly CompatRoute[] = [
  ...MAXMIND_ROUTES,
  ...IPINFO_ROUTES,
  ...IPAPI_ROUTES,
];

/**
 * A route's pattern as a regular expression: literal segments, `:name` (one
 * non-empty segment) and `:name{regex}` (the regex, which may cross slashes).
 */
function patternRegExp(pattern: string): RegExp {
  const source = pattern.replace(
    /:(\w+)(?:\{([^}]*)\})?|[.*+?^$()|[\]\\]/g,
    (token, name: string | undefined, regex: string | undefined) =>
      name === undefined ? `\\${token}` : `(?<${name}>${regex ?? "[^/]+"})`,
  );
  return new RegExp(`^${source}$`);
}

const COMPILED = COMPAT_ROUTES.map((route) => ({ route, regex: patternRegExp(route.path) }));

/**
 * The compatible route serving `method` on `path` (percent-decoded), with its
 * parameters; null when none does.
 *
 * @example matchCompatRoute("GET", "/ipinfo/8.8.8.8/city")?.params // { ip: "8.8.8.8", field: "city" }
 */
export function matchCompatRoute(
  method: string,
  path: string,
): { route: CompatRoute; params: Record<string, string> } | null {
  for (const { route, regex } of COMPILED) {
    if (route.method !== method) continue;
    const match = regex.exec(path);
    if (match) return { route, params: { ...match.groups } };
  }
  return null;
}
