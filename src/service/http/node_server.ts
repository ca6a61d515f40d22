/**
 * Serves a fetch handler with `node:http`, for clients that send the spec's
 * JSON body on a GET: Deno.serve (like the Fetch standard) drops GET bodies,
 * node:http keeps them. A GET/HEAD body is handed over as `env.getBody`,
 * since a Fetch `Request` cannot carry one.
 */

import http from "node:http";
import https from "node:https";
import { BadRequestError, capInput } from "../../base/errors.ts";
import {
  createRequestCheck,
  rejectionResponse,
  type RequestCheck,
  unsupportedMethod,
} from "./request_target.ts";

/** What the handler receives as its second argument (the app's `ServeEnv`, src/service/http/env.ts). */
export interface NodeServeEnv {
  remoteAddr: Deno.NetAddr;
  /** The body of a GET or HEAD request, which a Fetch Request cannot hold. */
  getBody: ReadableStream<Uint8Array> | null;
  /** Set by the app when its answer is a stream (src/service/http/streamed.ts). */
  streamed?: boolean;
}

export interface NodeServer {
  readonly port: number;
  readonly finished: Promise<void>;
  /** Stops accepting, closes idle connections, and resolves once the requests in flight are answered. */
  shutdown(): Promise<void>;
  /** Stops at once, cutting every connection. */
  close(): Promise<void>;
  /** Serves new TLS connections with this certificate and key (HTTPS servers only). */
  setTls(tls: { cert: string; key: string }): void;
}

type Handler = (request: Request, env: NodeServeEnv) => Response | Promise<Response>;

export interface NodeServeOptions {
  hostname: string;
  port: number;
  tls?: { cert: string; key: string } | null;
  /** Milliseconds a request head may take to arrive (default 10 s). */
  headersTimeoutMs?: number;
  /** Milliseconds a whole request may take to arrive (default 60 s). */
  requestTimeoutMs?: number;
}

/** Starts listening; resolves once the port is bound. */
export function serveWithNodeHttp(
  options: NodeServeOptions,
  handler: Handler,
): Promise<NodeServer> {
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  const checkRequest = createRequestCheck();
  const listener = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const deadline = requestDeadline(req, res, requestTimeoutMs);
    try {
      const env: { streamed?: boolean } = {};
      const response = await answer(req, handler, checkRequest, env);
      const headers: Record<string, string | string[]> = {};
      response.headers.forEach((value, key) => {
        headers[key] = key === "set-cookie" ? [...(headers[key] ?? []), value] : value;
      });
      if (response.body && env.streamed && req.method !== "HEAD") {
        // A streamed answer (a streamed bulk) reads its body as it answers, for as
        // long as the stream's own idle timeout allows: no whole-request deadline.
        deadline.clear();
        res.writeHead(response.status, headers);
        await writeStreamed(response.body, res);
        return;
      }
      const body = new Uint8Array(await response.arrayBuffer());
      // A HEAD answer states the GET body's length (set by the app); node sends no body.
      if (req.method !== "HEAD" || !headers["content-length"]) {
        headers["content-length"] = String(body.length);
      }
      res.writeHead(response.status, headers);
      res.end(body);
    } catch (error) {
      if (deadline.expired) return; // answered 408 and closed: the body's read failed
      console.error(error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ success: false, message: "Internal server error" }));
    }
  };
  // HTTPS with a certificate: the same handler, and the pair can be replaced while serving.
  const tls = options.tls;
  // Request lines up to 64 KiB reach the app (which answers 414 past its own limit), as on
  // Deno.serve; node's default (16 KiB) would answer 431 first.
  const serverOptions = { connectionsCheckingInterval: 1000, maxHeaderSize: 65_536 };
  const server = tls
    ? https.createServer({ ...serverOptions, ...tls }, listener)
    : http.createServer(serverOptions, listener);
  // Slow or idle clients: a head not received within 10 s is answered 408 and closed (checked
  // every second: node's default is every 30 s, which makes a 10 s timeout 30); so is a whole
  // request not received within 60 s, by requestDeadline, which spares a streamed answer
  // (node's own requestTimeout would cut it); an idle kept-alive connection is closed after 5 s.
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5_000;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  server.on("close", () => finish());
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      const address = server.address();
      resolve({
        port: typeof address === "object" && address ? address.port : options.port,
        finished,
        shutdown: () => {
          server.close();
          server.closeIdleConnections();
          return finished;
        },
        close: () => {
          server.close();
          server.closeAllConnections();
          return finished;
        },
        setTls: (pair) => {
          if (!(server instanceof https.Server)) throw new Error("Not an HTTPS server");
          server.setSecureContext(pair);
        },
      });
    });
  });
}

/** A request's deadline: `clear` it, or see whether it `expired`. */
interface Deadline {
  clear(): void;
  readonly expired: boolean;
}

/**
 * Answers 408 and closes the connection when the request (its body) has not
 * all arrived `timeoutMs` after its head, as node's `requestTimeout` does; the
 * server clears it for a streamed answer, whose body may take any time while
 * it moves (src/service/bulk/batches.ts's idle timeout ends it when it does not).
 */
function requestDeadline(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  timeoutMs: number,
): Deadline {
  const deadline = { expired: false, clear: () => clearTimeout(timer) };
  const timer = setTimeout(() => {
    if (req.complete) return;
    deadline.expired = true;
    if (res.headersSent) return void req.socket.destroy();
    const seconds = timeoutMs / 1000;
    const body = JSON.stringify({
      success: false,
      message: `Request not received within ${seconds} s: send the whole request sooner`,
    });
    res.writeHead(408, { "content-type": "application/json", connection: "close" });
    res.end(body, () => req.socket.destroy());
  }, timeoutMs);
  // Received, or the connection is gone: nothing left to time.
  req.once("end", deadline.clear);
  req.once("close", deadline.clear);
  res.once("close", () => req.complete && deadline.clear());
  return deadline;
}

/**
 * Checks the request line and Host first (request_target.ts, as the app does):
 * a method a Fetch Request cannot carry (TRACE) or a URL that cannot be built
 * from a malformed Host must get a 4xx envelope, not a 500.
 */
function answer(
  req: http.IncomingMessage,
  handler: Handler,
  checkRequest: RequestCheck,
  marks: { streamed?: boolean },
): Response | Promise<Response> {
  const method = req.method ?? "GET";
  const target = originFormTarget(req.url ?? "/");
  const problem = unsupportedMethod(method) ?? checkRequest(req.headers.host ?? null, target);
  if (problem) return rejectionResponse(problem, target);
  let converted: [Request, NodeServeEnv];
  try {
    converted = toFetch(req, method, target);
  } catch (error) {
    // Header bytes node accepts but the Fetch Headers class refuses, and the like.
    const message = capInput(`Malformed request: ${(error as Error).message}`, 200);
    return rejectionResponse(new BadRequestError(message), target);
  }
  const [request, env] = converted;
  const answered = handler(request, env);
  const marked = (response: Response) => {
    marks.streamed = env.streamed;
    return response;
  };
  return answered instanceof Promise ? answered.then(marked) : marked(answered);
}

/** `/path?query` as sent; the path and query of an absolute-form target; anything else as is. */
function originFormTarget(url: string): string {
  if (url.startsWith("/")) return url;
  const absolute = /^https?:\/\/[^/?#]*(\/[^#]*)?$/i.exec(url);
  return absolute ? absolute[1] ?? "/" : url;
}

function toFetch(
  req: http.IncomingMessage,
  method: string,
  target: string,
): [Request, NodeServeEnv] {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  // The Host was validated by checkRequest, so the URL's path is exactly the target.
  const url = `http://${headers.get("host") || "localhost"}${target}`;
  const declaresBody = headers.has("content-length") || headers.has("transfer-encoding");
  const stream = declaresBody ? bodyStream(req) : null;
  const bodyless = method === "GET" || method === "HEAD";
  const request = new Request(url, {
    method,
    headers,
    body: bodyless ? null : stream,
    // @ts-ignore: required by the Fetch standard for streamed request bodies
    duplex: "half",
  });
  const remoteAddr: Deno.NetAddr = {
    transport: "tcp",
    hostname: req.socket.remoteAddress ?? "",
    port: req.socket.remotePort ?? 0,
  };
  return [request, { remoteAddr, getBody: bodyless ? stream : null }];
}

/**
 * The request body as a web stream with back-pressure. Cancelling (a body over
 * the limit) stops delivery and drains the rest, so the response can still be
 * written on the same socket.
 */
function bodyStream(req: http.IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (chunk: Uint8Array) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.on("end", () => {
        if (open) controller.close();
        open = false;
      });
      req.on("error", (error) => {
        if (open) controller.error(error);
        open = false;
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      open = false;
      req.resume();
    },
  });
}

/**
 * Writes a response body as its stream yields it, waiting for the socket to
 * drain; a client that goes away cancels the stream (its producer stops).
 */
async function writeStreamed(
  body: ReadableStream<Uint8Array>,
  res: http.ServerResponse,
): Promise<void> {
  const reader = body.getReader();
  const gone = () => reader.cancel().catch(() => {});
  res.once("close", gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
    }
  } finally {
    res.off("close", gone);
    if (!res.destroyed) res.end();
  }
}
