/**
 * The app's outermost answer rule (src/service/http/rules/rules.ts): counts every
 * request for `/metrics`, writes its access log line (with the request's id),
 * and knows how many requests are in flight (shutdown waits for them).
 */

import type { AnswerRule } from "../http/rules/rules.ts";
import type { AppContext } from "../http/env.ts";
import { type ClientAddressResolver, clientOf } from "../http/client_address.ts";
import { isStreamed } from "../http/streamed.ts";
import { createAccessLogLine, type LogMode, truncateAddress } from "./access_log.ts";
import { methodIndex, type Metrics } from "./metrics.ts";
import { createRequestIdAssigner } from "./request_id.ts";

export interface InstrumentOptions {
  /** Where requests are counted; null: not counted (IPINTEL_METRICS=false). */
  metrics: Metrics | null;
  log: LogMode;
  /** Log full client addresses (else /24 and /48). */
  logFullIp: boolean;
  /** Receives each access log line (without newline). */
  writeLine: (line: string) => void;
  /** The client address of a request, as `/me` sees it (the app's resolver: one per server). */
  clientAddress: ClientAddressResolver;
  /** The route labels, by the index the app gives each request (`route` in the context). */
  routes: readonly string[];
}

export interface Instrumentation {
  /**
   * The outermost answer rule: before the others, it starts the clock and
   * gives the request its id (when every request is logged: IPINTEL_LOG=on);
   * after them, it counts and logs the answer.
   */
  rule: AnswerRule;
  /**
   * A request's id (made on first use: in errors-only mode only an answer that
   * gets a log line, or a 5xx report, pays for one), echoed in `X-Request-Id`;
   * undefined while the log is off.
   */
  requestId(c: AppContext): string | undefined;
  /** Requests whose response is not made yet. */
  inFlight(): number;
  /** Resolves the next time no request is in flight (at once when none is). */
  whenIdle(): Promise<void>;
}

/**
 * The instrumentation. A request that gets no log line (all with the log off, the
 * successes in errors-only mode) costs two clock reads and a few array
 * updates, and no request id; one that is logged has its body read once to count its bytes
 * (every body ipintel makes is a string), a streamed one is counted as it passes.
 */
export function instrument(options: InstrumentOptions): Instrumentation {
  const { metrics, log } = options;
  const assignId = createRequestIdAssigner();
  const accessLogLine = createAccessLogLine();
  const unmatched = options.routes.length - 1;
  const idOf = (c: AppContext): string | undefined => {
    if (log === "off") return undefined;
    // With every request logged the rule's `before` gave the id; else it is made on first use.
    return c.get("requestId") ?? assignId(c);
  };
  let inFlight = 0;
  let idle: (() => void)[] = [];
  const whenIdle = () =>
    inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve));
  const settled = () => {
    if (--inFlight === 0 && idle.length > 0) {
      for (const resolve of idle) resolve();
      idle = [];
    }
  };
  /** Whether a response with `status` gets a log line. */
  const logs = (status: number) => log === "on" || (log === "errors" && status >= 400);
  const client = (c: AppContext): string => {
    if (!c.env?.remoteAddr?.hostname) return "unknown";
    let address: string;
    try {
      address = clientOf(c, options.clientAddress);
    } catch {
      address = c.env.remoteAddr.hostname; // a malformed forwarding header: the peer is what is known
    }
    return options.logFullIp ? address : truncateAddress(address);
  };

  const rule: AnswerRule = {
    before(c) {
      c.set("startedAt", performance.now());
      inFlight++;
      if (log === "on") assignId(c); // before the handler: its answer carries the id
      return null;
    },
    after(c) {
      const started = c.get("startedAt");
      const status = c.res.status;
      if (logs(status)) idOf(c); // named in X-Request-Id (a copy of the answer if need be)
      const response = c.res;
      const route = c.get("route") ?? unmatched;
      const method = c.req.method;
      const end = (bytes: number) => {
        const seconds = (performance.now() - started) / 1000;
        metrics?.observe(route, methodIndex(method), status, seconds);
        if (!logs(status)) return;
        options.writeLine(accessLogLine({
          requestId: idOf(c) ?? "-",
          method,
          route: options.routes[route]!,
          status,
          durationMs: seconds * 1000,
          bytes,
          client: client(c),
          dataVersion: c.get("served")?.data.version.id ?? null,
          // A forward-auth denial says which rule denied (src/service/policy/decide.ts's header).
          rule: status === 403 ? response.headers.get("x-ip-policy-rule") : null,
        }));
      };
      if (isStreamed(c)) {
        // In flight until its body ends or the client goes away; its log line is written then.
        c.res = new Response(counted(response.body!, end), response);
        return;
      }
      if (!logs(status) || response.body === null) {
        settled();
        end(0);
        return;
      }
      // Read as text (Deno's fast case for the string bodies ipintel makes), then
      // answer with a copy holding the same text.
      return response.text().then((text) => {
        c.res = new Response(text, response);
        settled();
        end(utf8Length(text));
      });
    },
  };

  /** A streamed body passed on as it is read, its bytes counted; `end` once it ends or is cancelled. */
  const counted = (
    source: ReadableStream<Uint8Array>,
    end: (bytes: number) => void,
  ): ReadableStream<Uint8Array> => {
    const reader = source.getReader();
    let bytes = 0;
    let ended = false;
    const finish = () => {
      if (ended) return;
      ended = true;
      settled();
      end(bytes);
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            finish();
          } else {
            bytes += value.length;
            controller.enqueue(value);
          }
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      async cancel(reason) {
        finish();
        await reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
    return body;
  };

  return {
    rule,
    requestId: idOf,
    inFlight: () => inFlight,
    whenIdle,
  };
}

const NON_ASCII = /[\u0080-\uffff]/;
const encoder = new TextEncoder();

/** Bytes of `text` in UTF-8; JSON bodies are ASCII (escaped), so usually just its length. */
function utf8Length(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).length : text.length;
}
