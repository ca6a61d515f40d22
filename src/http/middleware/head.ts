/**
 * HEAD: Hono answers it as GET and drops the body; this states the GET body's
 * length (`Content-Length`), and stops a streamed answer's work at once
 * instead of letting it run unread.
 */

import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import { isStreamedResponse } from "../streamed.ts";

export function headAnswer(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.req.method !== "HEAD") return;
    const response = c.res;
    if (response.body === null) return;
    if (isStreamedResponse(response)) {
      await response.body.cancel().catch(() => {});
      return;
    }
    const length = (await response.clone().arrayBuffer()).byteLength;
    response.headers.set("content-length", String(length));
  };
}
