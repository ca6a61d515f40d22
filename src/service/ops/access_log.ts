/**
 * Access log lines: one JSON object per request, holding the route pattern
 * (never the URL, so never a query's `apiKey`), no header (so never
 * `X-API-Key`), and the client address cut to its /24 or /48 unless full
 * addresses are asked for.
 */

import { formatIpv6, parseIp } from "../../base/ip/parse.ts";

/** `on`: every request; `errors`: 4xx and 5xx only; `off`: none. */
export type LogMode = "on" | "errors" | "off";

export interface AccessLogEntry {
  requestId: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  /** Bytes of the response body. */
  bytes: number;
  /** The client address, already truncated when it must be. */
  client: string;
  /** The id of the data set that answered (X-Data-Version); null while none is loaded. */
  dataVersion: string | null;
  /** The forward-auth rule that denied the request (`GET /auth` answering 403). */
  rule?: string | null;
}

/**
 * The JSON line of one request (without the newline); `time` (ms since the
 * epoch) is when it was answered. Each call formats its time afresh: the
 * instrumentation makes its own writer once ({@link createAccessLogLine}).
 */
export function accessLogLine(entry: AccessLogEntry, time: number = Date.now()): string {
  return lineOf(entry, new Date(time).toISOString());
}

/**
 * The access log's line writer, made once per instrumentation: {@link accessLogLine}
 * with the time formatted once per millisecond (many requests are answered within
 * the same one).
 */
export function createAccessLogLine(): (entry: AccessLogEntry, time?: number) => string {
  let lastTime = NaN;
  let lastIso = "";
  return (entry, time = Date.now()) => {
    if (time !== lastTime) {
      lastTime = time;
      lastIso = new Date(time).toISOString();
    }
    return lineOf(entry, lastIso);
  };
}

function lineOf(entry: AccessLogEntry, time: string): string {
  return JSON.stringify({
    time,
    requestId: entry.requestId,
    method: entry.method,
    route: entry.route,
    status: entry.status,
    durationMs: Math.round(entry.durationMs * 1000) / 1000,
    bytes: entry.bytes,
    client: entry.client,
    dataVersion: entry.dataVersion,
    ...(entry.rule ? { rule: entry.rule } : {}),
  });
}

/**
 * The network an address belongs to, as logged by default: IPv4 to its /24
 * (`81.2.69.0/24`), IPv6 to its /48 (`2a02:ec0::/48`). Text that is not an
 * address (a Unix socket peer) is logged as `unknown`.
 */
export function truncateAddress(address: string): string {
  let ip;
  try {
    ip = parseIp(address);
  } catch {
    return "unknown";
  }
  if (ip.version === 4) return `${ip.bytes[0]}.${ip.bytes[1]}.${ip.bytes[2]}.0/24`;
  const network = new Uint8Array(16);
  for (let i = 0; i < 6; i++) network[i] = ip.bytes[i]!;
  return `${formatIpv6(network)}/48`;
}

/**
 * Collects lines and writes them in batches (one write per `flushMs`, or
 * sooner past `maxPending` characters): one write per request would cost the
 * server a system call each. `flushMs` 0 writes each line at once.
 */
export class LineWriter {
  #pending: string[] = [];
  #size = 0;
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly write: (text: string) => void,
    private readonly options: { flushMs?: number; maxPending?: number } = {},
  ) {}

  /** Queues one line (without its newline). */
  add(line: string): void {
    this.#pending.push(line);
    this.#size += line.length + 1;
    const flushMs = this.options.flushMs ?? 100;
    if (flushMs === 0 || this.#size >= (this.options.maxPending ?? 64 * 1024)) this.flush();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.flush();
      }, flushMs);
    }
  }

  /** Writes every queued line now. */
  flush(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#pending.length === 0) return;
    const text = this.#pending.join("\n") + "\n";
    this.#pending = [];
    this.#size = 0;
    this.write(text);
  }
}
