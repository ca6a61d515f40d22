/**
 * Request ids made here, for hono/request-id (which keeps a caller's sane
 * `X-Request-Id` instead): a random per-process prefix and a counter: unique,
 * short, and cheap enough for every request.
 */

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
