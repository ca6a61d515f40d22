/**
 * Streamed answers (a streamed bulk), marked where each reader of the answer
 * looks: in the request's context, so that the instrumentation counts the body
 * as it passes and a HEAD stops it, and in the server's per-request `env`, so
 * that the node:http server writes it as it comes (node_server.ts). Neither
 * reads a body to tell.
 */

import type { AppContext } from "./env.ts";

/** The answer of a streamed body, marked as one. */
export function streamedResponse(
  c: AppContext,
  body: ReadableStream<Uint8Array>,
  headers: Record<string, string>,
): Response {
  c.set("streamed", true);
  if (c.env) c.env.streamed = true;
  return c.body(body, 200, headers);
}

/** Whether the answer of `c` is a streamed one. */
export function isStreamed(c: AppContext): boolean {
  return c.get("streamed") === true;
}
