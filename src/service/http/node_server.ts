/**
 * Serves a fetch handler with `node:http`, for clients that send the spec's
 * JSON body on a GET: Deno.serve (like the Fetch standard) drops GET bodies,
 * node:http keeps them. A GET/HEAD body is handed over as `env.getBody`,
 * since a Fetch `Request` cannot carry one.
 */

import http from "node:http";
import https from "node:https";
import { BadRequestError, capInput } from "../../base/errors.ts";
import { renderError } from "../../core/format/render.ts";
import {
  createRequestCheck,
  MAX_TARGET_LENGTH,
  rejectionResponse,
  type RequestCheck,
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
  /**
   * The version of the data served now (null while none is loaded): named in
   * `X-Data-Version` on the answers made before or without the app (a request
   * node refuses itself, a timeout, a 500), as the app names it on its own.
   */
  dataVersion?: () => string | null;
}

/**
 * Longest request head (request line and headers) node reads: 64 KiB. A
 * target up to there reaches the app, which answers 414 past its own limit
 * (MAX_TARGET_LENGTH), as on Deno.serve; node's default (16 KiB) would answer
 * 431 first. A longer head is answered by {@link headOverflow}.
 */
export const MAX_HEAD_BYTES = 65_536;

/** Starts listening; resolves once the port is bound. */
export function serveWithNodeHttp(
  options: NodeServeOptions,
  handler: Handler,
): Promise<NodeServer> {
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  const checkRequest = createRequestCheck();
  const dataVersion = options.dataVersion ?? (() => null);
  const listener = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const deadline = requestDeadline(req, res, requestTimeoutMs, dataVersion);
    try {
      const env: { streamed?: boolean } = {};
      const response = await answer(req, handler, checkRequest, env);
      const headers: Record<string, string | string[]> = {};
      response.headers.forEach((value, key) => {
        headers[key] = key === "set-cookie" ? [...(headers[key] ?? []), value] : value;
      });
      // Every answer names the data while some is loaded: those refused before the app too.
      if (headers["x-data-version"] === undefined) {
        const version = dataVersion();
        if (version !== null) headers["x-data-version"] = version;
      }
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
      if (!res.headersSent) {
        const version = dataVersion();
        res.writeHead(500, {
          "content-type": "application/json",
          ...(version === null ? {} : { "x-data-version": version }),
        });
      }
      res.end(JSON.stringify({ success: false, message: "Internal server error" }));
    }
  };
  // HTTPS with a certificate: the same handler, and the pair can be replaced while serving.
  const tls = options.tls;
  const serverOptions = { connectionsCheckingInterval: 1000, maxHeaderSize: MAX_HEAD_BYTES };
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
  // What node's parser refuses before any handler gets the envelope, not node's bare answer.
  server.on("clientError", (error: Error & { code?: string; rawPacket?: Uint8Array }, socket) => {
    if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy();
    socket.end(parserRefusal(error, server.headersTimeout, dataVersion()));
  });
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
  dataVersion: () => string | null,
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
    const version = dataVersion();
    res.writeHead(408, {
      "content-type": "application/json",
      connection: "close",
      ...(version === null ? {} : { "x-data-version": version }),
    });
    res.end(body, () => req.socket.destroy());
  }, timeoutMs);
  // Received, or the connection is gone: nothing left to time.
  req.once("end", deadline.clear);
  req.once("close", deadline.clear);
  res.once("close", () => req.complete && deadline.clear());
  return deadline;
}

/**
 * The answer, as bytes for the socket, to a request node's parser refused:
 * a head too long ({@link headOverflow}), a head too slow (408), else 400
 * (a malformed request line or header, a method it does not parse, TRACK).
 */
export function parserRefusal(
  error: Error & { code?: string; rawPacket?: Uint8Array },
  headersTimeoutMs: number,
  dataVersion: string | null,
): string {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return headOverflow(error.rawPacket ?? null, dataVersion);
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    const seconds = headersTimeoutMs / 1000;
    return rawAnswer(
      408,
      "Request Timeout",
      `Request head not received within ${seconds} s: send the whole request sooner`,
      dataVersion,
    );
  }
  const why = error.code ? ` (${error.code})` : "";
  return rawAnswer(
    400,
    "Bad Request",
    `Malformed request: the HTTP parser refused it${why}`,
    dataVersion,
  );
}

/** A whole HTTP/1.1 answer with the JSON error envelope, closing the connection. */
function rawAnswer(
  status: number,
  reason: string,
  message: string,
  dataVersion: string | null,
): string {
  const body = renderError(message, "json");
  const head = [
    `HTTP/1.1 ${status} ${reason}`,
    `content-type: ${body.contentType}`,
    `content-length: ${new TextEncoder().encode(body.body).length}`,
    ...(dataVersion === null ? [] : [`x-data-version: ${dataVersion}`]),
    "connection: close",
  ];
  return `${head.join("\r\n")}\r\n\r\n${body.body}`;
}

/**
 * The answer to a request head over {@link MAX_HEAD_BYTES}, which node refuses
 * before any handler (its `clientError`), written on the socket as is: the
 * 414 envelope when the request line is what is too long (the packet that
 * overflowed is still inside it, or ends it after the limit), else 431 for the
 * headers. JSON, since the format the target asks for may be past what was
 * read; the connection is closed.
 */
export function headOverflow(packet: Uint8Array | null, dataVersion: string | null): string {
  const text = packet ? new TextDecoder().decode(packet) : "";
  const lineEnd = text.indexOf("\r\n");
  const firstLine = lineEnd === -1 ? text : text.slice(0, lineEnd);
  // A request line starts the packet (`GET /… HTTP/1.1`), or is its head's only line so far.
  const startsRequest = /^[A-Za-z]+ (?:[/*]|https?:\/\/)/.test(firstLine);
  const endsRequestLine = / HTTP\/\d\.\d$/.test(firstLine);
  const targetTooLong = lineEnd === -1
    ? !/^[\x21-\x7e]+:/.test(text) // no header name: the packet is inside the request line
    : endsRequestLine && (!startsRequest || firstLine.length > MAX_TARGET_LENGTH);
  const [status, reason, message] = targetTooLong
    ? [
      414,
      "URI Too Long",
      `Request target longer than ${MAX_HEAD_BYTES} bytes (the limit is ${MAX_TARGET_LENGTH}): POST /bulk takes any number of addresses`,
    ]
    : [
      431,
      "Request Header Fields Too Large",
      `Request headers longer than ${MAX_HEAD_BYTES} bytes: send fewer or shorter headers (POST /bulk takes any number of addresses in its body)`,
    ];
  return rawAnswer(status, reason, message, dataVersion);
}

/**
 * Checks the request line and Host first (request_target.ts, as the app does):
 * a URL that cannot be built from a malformed Host must get a 4xx envelope,
 * not a 500. A method a Fetch Request cannot carry (TRACE) reaches the app as
 * it does from Deno.serve, which answers 405 with the route's own `Allow`.
 */
function answer(
  req: http.IncomingMessage,
  handler: Handler,
  checkRequest: RequestCheck,
  marks: { streamed?: boolean },
): Response | Promise<Response> {
  const method = req.method ?? "GET";
  const target = originFormTarget(req.url ?? "/");
  const problem = checkRequest(req.headers.host ?? null, target);
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
  // CONNECT, TRACE and TRACK are refused by the Request constructor (a forbidden method):
  // made as a GET and given the method as sent, as Deno.serve hands them to the app.
  const forbidden = FORBIDDEN_METHOD.test(method);
  const request = new Request(url, {
    method: forbidden ? "GET" : method,
    headers,
    body: bodyless || forbidden ? null : stream,
    // @ts-ignore: required by the Fetch standard for streamed request bodies
    duplex: "half",
  });
  if (forbidden) Object.defineProperty(request, "method", { value: method.toUpperCase() });
  const remoteAddr: Deno.NetAddr = {
    transport: "tcp",
    hostname: req.socket.remoteAddress ?? "",
    port: req.socket.remotePort ?? 0,
  };
  return [request, { remoteAddr, getBody: bodyless ? stream : null }];
}

/** Methods the Fetch standard forbids in a Request (any case). */
const FORBIDDEN_METHOD = /^(CONNECT|TRACE|TRACK)$/i;

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
