/**
 * The outermost request handler: wraps the server's handler (the fast path and
 * the app behind it) to count every request for `/metrics`, give it a request
 * id, write its access log line, and know how many are in flight.
 */

import { isStreamedResponse, markStreamed } from "../http/streamed.ts";
import { accessLogLine, type LogMode, truncateAddress } from "./access_log.ts";
import { methodIndex, type Metrics } from "./metrics.ts";
import { createRequestIds } from "./request_id.ts";
import { routeIndex, ROUTES } from "./route.ts";

type Env = { remoteAddr?: Deno.NetAddr } | undefined;
type Handler<E extends Env> = (request: Request, env: E) => Response | Promise<Response>;

export interface InstrumentOptions {
  /** Where requests are counted; null: not counted (IPINTEL_METRICS=false). */
  metrics: Metrics | null;
  log: LogMode;
  /** Log full client addresses (else /24 and /48). */
  logFullIp: boolean;
  /** Receives each access log line (without newline). */
  writeLine: (line: string) => void;
  /** The client address of a request, as `/me` sees it (trusted proxies applied). */
  clientAddress: (peer: string, headers: Headers) => string;
}

export interface Instrumented<E extends Env> {
  handler: Handler<E>;
  /** Requests whose response is not made yet. */
  inFlight(): number;
  /** Resolves the next time no request is in flight (at once when none is). */
  whenIdle(): Promise<void>;
  /** The id of a request's log line (made on first use; none while the log is off), for error reports. */
  requestIdOf(request: Request): string | undefined;
}

/**
 * Wraps `handler`. A request that gets no log line (all with the log off, the
 * successes in errors-only mode) costs two clock reads and a few array
 * updates; one that is logged gets `X-Request-Id` and its body is read once to
 * count its bytes (every body ipintel makes is a string).
 */
export function instrument<E extends Env>(
  handler: Handler<E>,
  options: InstrumentOptions,
): Instrumented<E> {
  const { metrics, log } = options;
  let inFlight = 0;
  let idle: (() => void)[] = [];
  const whenIdle = () =>
    inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve));

  const count = (request: Request, started: number, status: number): number => {
    if (--inFlight === 0 && idle.length > 0) {
      for (const resolve of idle) resolve();
      idle = [];
    }
    const seconds = (performance.now() - started) / 1000;
    metrics?.observe(routeIndex(request.url), methodIndex(request.method), status, seconds);
    return seconds;
  };

  const requestIds = createRequestIds();
  // Ids are made when first needed (a log line, an error report), never for a
  // success that errors-only mode does not log: that keeps the common answer as
  // cheap as with the log off.
  const ids = new WeakMap<Request, string>();
  const idOf = (request: Request): string => {
    let id = ids.get(request);
    if (id === undefined) {
      id = requestIds(request.headers);
      ids.set(request, id);
    }
    return id;
  };
  const client = (env: E, headers: Headers): string => {
    const peer = env?.remoteAddr?.hostname;
    if (!peer) return "unknown";
    let address: string;
    try {
      address = options.clientAddress(peer, headers);
    } catch {
      address = peer; // a malformed forwarding header: the peer is what is known
    }
    return options.logFullIp ? address : truncateAddress(address);
  };

  const finish = async (
    request: Request,
    env: E,
    started: number,
    response: Response,
  ): Promise<Response> => {
    const status = response.status;
    const seconds = count(request, started, status);
    const id = idOf(request);
    let bytes = 0;
    if (response.body !== null) {
      // Read as text (Deno's fast case for the string bodies ipintel makes),
      // then answer with a copy holding the same text.
      const text = await response.text();
      bytes = utf8Length(text);
      response = new Response(text, response);
    }
    options.writeLine(accessLogLine({
      requestId: id,
      method: request.method,
      route: ROUTES[routeIndex(request.url)]!,
      status,
      durationMs: seconds * 1000,
      bytes,
      client: client(env, request.headers),
    }));
    return withRequestId(response, id);
  };
  /**
   * A streamed answer (a streamed bulk): in flight until its body ends or the
   * client goes away, its bytes counted as they pass (never read whole), its
   * log line written then. Shutdown waits for it like for any request.
   */
  const streamed = (
    request: Request,
    env: E,
    started: number,
    response: Response,
    source: ReadableStream<Uint8Array>,
  ): Response => {
    const logged = logs(response.status);
    const id = logged ? idOf(request) : undefined;
    const reader = source.getReader();
    let bytes = 0;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const seconds = count(request, started, response.status);
      if (id === undefined) return;
      options.writeLine(accessLogLine({
        requestId: id,
        method: request.method,
        route: ROUTES[routeIndex(request.url)]!,
        status: response.status,
        durationMs: seconds * 1000,
        bytes,
        client: client(env, request.headers),
      }));
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            end();
          } else {
            bytes += value.length;
            controller.enqueue(value);
          }
        } catch (error) {
          end();
          controller.error(error);
        }
      },
      async cancel(reason) {
        end();
        await reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
    markStreamed(body);
    const wrapped = new Response(body, response);
    return id === undefined ? wrapped : withRequestId(wrapped, id);
  };
  /** Whether a response with `status` gets a log line (and so a request id). */
  const logs = (status: number) => log === "on" || (log === "errors" && status >= 400);
  /** Counts an answer, and logs it when it gets a log line. */
  const settle = (
    request: Request,
    env: E,
    started: number,
    response: Response,
  ): Response | Promise<Response> => {
    // Never `response.body` for the others: it would turn their string body into a stream.
    if (isStreamedResponse(response)) {
      return streamed(request, env, started, response, response.body!);
    }
    if (logs(response.status)) return finish(request, env, started, response);
    count(request, started, response.status);
    return response;
  };

  const logged = (request: Request, env: E): Response | Promise<Response> => {
    const started = performance.now();
    inFlight++;
    if (log === "on") idOf(request);
    let result;
    try {
      result = handler(request, env);
    } catch (error) {
      settle(request, env, started, new Response(null, { status: 500 }));
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (response) => settle(request, env, started, response),
        (error) => {
          settle(request, env, started, new Response(null, { status: 500 }));
          throw error;
        },
      );
    }
    return settle(request, env, started, result);
  };

  return {
    handler: logged,
    inFlight: () => inFlight,
    whenIdle,
    requestIdOf: log === "off" ? () => undefined : idOf,
  };
}

const NON_ASCII = /[\u0080-\uffff]/;
const encoder = new TextEncoder();

/** Bytes of `text` in UTF-8; JSON bodies are ASCII (escaped), so usually just its length. */
function utf8Length(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).length : text.length;
}

/** Echoes the request id; a response with immutable headers is copied first. */
function withRequestId(response: Response, id: string): Response {
  try {
    response.headers.set("x-request-id", id);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set("x-request-id", id);
    return copy;
  }
}
