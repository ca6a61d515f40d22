/**
 * The route label of an answered request (`/ip/{ip}`, never `/ip/8.8.8.8`) for
 * metrics and access logs: the table entry of the Hono route that answered.
 * A compatible API's routes carry their family's label.
 */

import { routePath } from "hono/route";
import { COMPAT_ROUTES } from "../compat/routes.ts";
import type { AppContext } from "./env.ts";
import { familyPattern, handlerPatterns, ROUTES, type RouteSpec } from "./routes.ts";

const table: readonly RouteSpec[] = ROUTES;

/** The table entry a compatible route's pattern belongs to (`/ipinfo/:ip/:field` → `/ipinfo/{path}`). */
export function familyIndex(compatPath: string): number {
  const index = table.findIndex((route) => {
    if (route.path === compatPath) return true;
    const brace = route.path.indexOf("{");
    if (brace === -1) return false;
    const prefix = route.path.slice(0, brace);
    return compatPath.startsWith(prefix) || compatPath === prefix.slice(0, -1);
  });
  if (index === -1) throw new Error(`No route table entry for the compatible route ${compatPath}`);
  return index;
}

/** Hono pattern → index in ROUTE_LABELS; any other pattern (a `*` middleware) is unmatched. */
const LABEL_OF_PATTERN = new Map<string, number>([
  ...COMPAT_ROUTES.map((route) => [route.path, familyIndex(route.path)] as const),
  ...table.flatMap((route, index) =>
    [...handlerPatterns(route), familyPattern(route)].map((p) => [p, index] as const)
  ),
]);

/**
 * The index in ROUTE_LABELS of the route that answered `c` (read once it is
 * answered): its handler's, else the family of a request no handler took (a 405).
 */
export function routeLabelIndex(c: AppContext): number {
  return LABEL_OF_PATTERN.get(routePath(c)) ?? c.get("family") ?? table.length;
}
