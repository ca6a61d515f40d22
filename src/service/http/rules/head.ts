/**
 * HEAD: Hono answers it as GET and drops the body; this states the GET body's
 * length (`Content-Length`), and stops a streamed answer's work at once
 * instead of letting it run unread.
 */

import { isStreamed } from "../streamed.ts";
import type { AnswerRule } from "./rules.ts";

export function headAnswer(): AnswerRule {
  return {
    after(c) {
      if (c.req.method !== "HEAD") return;
      const response = c.res;
      if (response.body === null) return;
      if (isStreamed(c)) return response.body.cancel().catch(() => {});
      return response.clone().arrayBuffer().then((body) => {
        response.headers.set("content-length", String(body.byteLength));
      });
    },
  };
}
