/** `RateLimit-Limit`, `-Remaining` and `-Reset` on every answer of a charged request (a 429's too). */

import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";

export function rateLimitHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const decision = c.get("rate");
    if (!decision) return;
    const headers = c.res.headers;
    headers.set("ratelimit-limit", String(decision.limit));
    headers.set("ratelimit-remaining", String(decision.remaining));
    headers.set("ratelimit-reset", String(decision.resetSeconds));
  };
}
