/** Access control at the HTTP edge: where a request's key comes from, and the RateLimit headers. */

import type { RateDecision } from "../access/rate_limiter.ts";

/**
 * The API key a request carries: the `apiKey` query parameter (it wins, as the
 * spec names it), else `X-API-Key`, else `Authorization: Bearer`. Null when none.
 */
export function apiKeyOf(queryKey: string | undefined, headers: Headers): string | null {
  if (queryKey !== undefined) return queryKey;
  const header = headers.get("x-api-key");
  if (header !== null) return header.trim();
  const authorization = headers.get("authorization");
  if (authorization === null) return null;
  const match = /^\s*bearer\s+(\S*)\s*$/i.exec(authorization);
  return match ? match[1]! : authorization.trim(); // another scheme: still a key that is wrong
}

/** `RateLimit-Limit`, `-Remaining` and `-Reset` for a decision (a 429 adds `Retry-After`). */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
}
