/** The first check of every request: a well-formed Host header and a path for a target. */

import type { AppContext } from "../env.ts";
import { createRequestCheck, MAX_TARGET_LENGTH, requestTarget } from "../request_target.ts";
import type { AnswerRule } from "./rules.ts";

/** A 400 or 414 before a route reads anything. */
export function hostCheck(): AnswerRule {
  const checkRequest = createRequestCheck();
  return {
    before(c: AppContext) {
      const request = c.req.raw;
      const host = request.headers.get("host");
      // The routed path (the target as sent, without its query) is enough, unless the whole
      // URL is long enough for the target to pass the limit.
      const long = request.url.length > MAX_TARGET_LENGTH;
      return checkRequest(host, long ? requestTarget(request, host) : c.req.path);
    },
  };
}
