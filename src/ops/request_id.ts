/**
 * Request ids: the caller's `X-Request-Id` when it is a sane token, else one
 * made here. Made ids are a random per-process prefix and a counter: unique,
 * short, and cheap enough for every request.
 */

/** Longest id accepted from a caller; a longer or odd one is replaced, never echoed. */
export const MAX_REQUEST_ID_LENGTH = 128;

// Characters of UUIDs, W3C trace ids and the usual proxy-made ids; nothing a
// header or a log line would need to escape.
const VALID = /^[A-Za-z0-9._~:@+=\/-]+$/;

/** Returns a function giving each request its id. */
export function createRequestIds(): (headers: Headers) => string {
  const prefix = Array.from(
    crypto.getRandomValues(new Uint8Array(6)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  let counter = 0;
  return (headers) => {
    const given = headers.get("x-request-id");
    if (given !== null && given.length <= MAX_REQUEST_ID_LENGTH && VALID.test(given)) return given;
    return `${prefix}-${(++counter).toString(36)}`;
  };
}
