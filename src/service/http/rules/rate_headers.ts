/** `RateLimit-Limit`, `-Remaining` and `-Reset` on every answer of a charged request (a 429's too). */

import type { AnswerRule } from "./rules.ts";

export function rateLimitHeaders(): AnswerRule {
  return {
    after(c) {
      const decision = c.get("rate");
      if (!decision) return;
      const headers = c.res.headers;
      headers.set("ratelimit-limit", String(decision.limit));
      headers.set("ratelimit-remaining", String(decision.remaining));
      headers.set("ratelimit-reset", String(decision.resetSeconds));
    },
  };
}
