/**
 * Streamed answers (a streamed bulk) and their marks: a server writes their
 * bodies as they come (node_server.ts), and the instrumentation counts them as
 * they pass (ops/instrument.ts), telling them apart without reading a body.
 */

import type { AppContext } from "./env.ts";

/** The bodies of streamed answers, which a server must write as they come (node_server.ts). */
const streamedBodies = new WeakSet<ReadableStream<Uint8Array>>();

/**
 * Responses of streamed answers, so that a wrapper can tell them apart without
 * reading `response.body`: on a string body that getter makes a stream, which
 * costs its allocation and moves Deno.serve off its path for static bodies.
 */
const streamedResponses = new WeakSet<Response>();

/** Whether a response body is a streamed answer's (not to be read whole before it is sent). */
export function isStreamedBody(body: ReadableStream<Uint8Array>): boolean {
  return streamedBodies.has(body);
}

/** Marks a body that passes a streamed answer on (ops/instrument.ts wraps it to count it). */
export function markStreamed(body: ReadableStream<Uint8Array>): void {
  streamedBodies.add(body);
}

/** The answer of a streamed body, marked as one. */
export function streamedResponse(
  c: AppContext,
  body: ReadableStream<Uint8Array>,
  headers: Record<string, string>,
): Response {
  markStreamed(body);
  const response = c.body(body, 200, headers);
  streamedResponses.add(response);
  return response;
}

/** Marks a response made from a streamed body (a wrapper passing one on). */
export function markStreamedResponse(response: Response): Response {
  streamedResponses.add(response);
  return response;
}

/** Whether `response` carries a streamed answer. */
export function isStreamedResponse(response: Response): boolean {
  return streamedResponses.has(response);
}
