/** The first rule of every request: a well-formed Host header and a path for a target. */

import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import { checkRequest, requestTarget } from "../request_target.ts";

/** Answers 400 (through the app's error handler) before anything routes or reads the query. */
export function hostCheck(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const request = c.req.raw;
    const host = request.headers.get("host");
    const problem = checkRequest(host, requestTarget(request, host));
    if (problem) throw problem;
    await next();
  };
}
