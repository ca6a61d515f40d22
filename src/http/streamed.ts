/**
 * Streamed answers (a streamed bulk) and their marks: a server writes their
 * bodies as they come (node_server.ts), and the instrumentation counts them as
 * they pass (ops/instrument.ts), telling them apart without reading a body.
 */

/** The bodies of streamed answers, which a server must write as they come (node_server.ts). */
const streamedBodies = new WeakSet<ReadableStream<Uint8Array>>();

/** Whether a response body is a streamed answer's (not to be read whole before it is sent). */
export function isStreamedBody(body: ReadableStream<Uint8Array>): boolean {
  return streamedBodies.has(body);
}

/** Marks a body that passes a streamed answer on (ops/instrument.ts wraps it to count it). */
export function markStreamed(body: ReadableStream<Uint8Array>): void {
  streamedBodies.add(body);
}

/**
 * Responses made from a streamed answer's body (the pipeline marks them), so
 * that a wrapper can tell them apart without reading `response.body`: on a
 * string body that getter makes a stream, which costs its allocation and
 * moves Deno.serve off its path for static bodies (about 2 µs of CPU per
 * request, measured over HTTP).
 */
const streamedResponses = new WeakSet<Response>();

/** Marks `response` as a streamed answer's when its body is one. */
export function markStreamedResponse(response: Response, body: unknown): void {
  if (body instanceof ReadableStream && streamedBodies.has(body)) streamedResponses.add(response);
}

/** Whether `response` carries a streamed answer (see markStreamedResponse). */
export function isStreamedResponse(response: Response): boolean {
  return streamedResponses.has(response);
}
