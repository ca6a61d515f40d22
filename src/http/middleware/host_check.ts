/** The first rule of every request: a well-formed Host header and a path for a target. */

import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import { checkRequest, MAX_TARGET_LENGTH, requestTarget } from "../request_target.ts";

/** Answers 400 or 414 (through the app's error handler) before a route reads anything. */
export function hostCheck(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const request = c.req.raw;
    const host = request.headers.get("host");
    // The routed path (the target as sent, without its query) is enough, unless the whole
    // URL is long enough for the target to pass the limit.
    const target = request.url.length > MAX_TARGET_LENGTH
      ? requestTarget(request, host)
      : c.req.path;
    const problem = checkRequest(host, target);
    if (problem) throw problem;
    await next();
  };
}
