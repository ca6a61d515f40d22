/**
 * CORS, one rule for every answer, errors and 404s included: with `*`,
 * `Access-Control-Allow-Origin: *`; with a list of origins, the request's
 * Origin when listed, and `Vary: Origin` always. The preflight is a route of
 * its own (one per route of the table: {@link preflight}), so it lists that
 * route's methods and an unknown path is a 404. hono/cors is not used: it
 * answers every OPTIONS, for any path, with one method list for all routes.
 */

import { allowedMethods, type Handler, type RouteMethod } from "../route.ts";
import type { AnswerRule } from "./rules.ts";

/** The CORS headers of IPINTEL_CORS_ORIGINS (`*` or a list of origins), added to each answer. */
export function corsHeaders(origins: readonly string[]): AnswerRule {
  if (origins.includes("*")) {
    return { after: (c) => c.res.headers.set("access-control-allow-origin", "*") };
  }
  return {
    after(c) {
      const headers = c.res.headers;
      const origin = c.req.raw.headers.get("origin");
      if (origin !== null && origins.includes(origin)) {
        headers.set("access-control-allow-origin", origin);
      }
      headers.append("vary", "Origin");
    },
  };
}

/** The CORS preflight of a route family: its methods, and the request headers asked for. */
export function preflight(familyMethods: readonly RouteMethod[]): Handler {
  const methods = allowedMethods(familyMethods).filter((m) => m !== "OPTIONS").join(",");
  return (c) => {
    const headers: Record<string, string> = { "access-control-allow-methods": methods };
    const asked = c.req.raw.headers.get("access-control-request-headers");
    if (asked) {
      headers["access-control-allow-headers"] = asked.split(",").map((h) => h.trim()).join(",");
      headers.vary = "Access-Control-Request-Headers";
    }
    return c.body(null, 204, headers);
  };
}
