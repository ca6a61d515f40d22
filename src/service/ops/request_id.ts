/**
 * Request ids: a caller's sane `X-Request-Id` is kept (as hono/request-id
 * does), else one is made here from a random per-process prefix and a
 * counter: unique, short, and cheap enough for every request.
 */

import type { AppContext } from "../http/env.ts";

/** Longest id accepted from a caller; a longer or odd one is replaced, never echoed. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Returns a function making a new id at each call. */
export function createRequestIds(): () => string {
  const prefix = Array.from(
    crypto.getRandomValues(new Uint8Array(6)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

/**
 * Gives a request its id (the caller's sane `X-Request-Id`, else a new one),
 * kept in the context as `requestId` and named in the answer's `X-Request-Id`.
 */
export function createRequestIdAssigner(): (c: AppContext) => string {
  const next = createRequestIds();
  return (c) => {
    let id = c.req.raw.headers.get("x-request-id");
    if (!id || id.length > MAX_REQUEST_ID_LENGTH || /[^\w\-=]/.test(id)) id = next();
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    return id;
  };
}
