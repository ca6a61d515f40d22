/**
 * Access log lines: one JSON object per request, holding the route pattern
 * (never the URL, so never a query's `apiKey`), no header (so never
 * `X-API-Key`), and the client address cut to its /24 or /48 unless full
 * addresses are asked for.
 */

import { formatIpv6, parseIp } from "../ip/parse.ts";

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
}

/** The JSON line of one request (without the newline); `time` (ms since the epoch) is when it was answered. */
export function accessLogLine(entry: AccessLogEntry, time: number = Date.now()): string {
  return JSON.stringify({
    time: isoTime(time),
    requestId: entry.requestId,
    method: entry.method,
    route: entry.route,
    status: entry.status,
    durationMs: Math.round(entry.durationMs * 1000) / 1000,
    bytes: entry.bytes,
    client: entry.client,
  });
}

// Many requests are answered within the same millisecond: format each millisecond once.
let lastTime = NaN;
let lastIso = "";
function isoTime(ms: number): string {
  if (ms !== lastTime) {
    lastTime = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
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

/** Where a sink writes: `Deno.stdout` by default (`Deno.stderr` for error details). */
export interface Output {
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Writes whole texts to stdout without ever stopping, blocking or failing the
 * server: a write is asynchronous (a full pipe holds up no request), at most
 * `maxQueuedBytes` (default 1 MiB) are being written or wait their turn, and
 * what does not fit, or cannot be written
 * (a closed pipe: `serve | head`), is dropped and counted, never thrown.
 */
export class LogSink {
  #queue: Uint8Array[] = [];
  #queued = 0;
  #pump: Promise<void> | null = null;
  #warned = false;
  readonly #encoder = new TextEncoder();
  readonly #out: Output;
  readonly #maxQueued: number;

  /**
   * `onDrop` counts the lines dropped; `warn` says once that writes fail
   * (stderr by default: the access log's own pipe may be the broken one).
   */
  constructor(
    private readonly options: {
      out?: Output;
      maxQueuedBytes?: number;
      onDrop?: (lines: number) => void;
      warn?: (line: string) => void;
    } = {},
  ) {
    this.#out = options.out ?? Deno.stdout;
    this.#maxQueued = options.maxQueuedBytes ?? 1024 * 1024;
  }

  /** Queues text made of whole lines; drops it when the queue is full. */
  readonly write = (text: string): void => {
    const bytes = this.#encoder.encode(text);
    if (this.#queued + bytes.length > this.#maxQueued) {
      this.#drop(bytes, "stdout does not keep up");
      return;
    }
    this.#queue.push(bytes);
    this.#queued += bytes.length;
    this.#pump ??= this.#run().finally(() => this.#pump = null);
  };

  /** Resolves once the queue is written, or after `timeoutMs` (what is left is then lost). */
  async flush(timeoutMs: number): Promise<void> {
    if (!this.#pump) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#pump,
      new Promise((resolve) => timer = setTimeout(resolve, timeoutMs)),
    ]);
    clearTimeout(timer);
  }

  async #run(): Promise<void> {
    while (this.#queue.length) {
      const chunk = this.#queue.length === 1 ? this.#queue[0]! : concat(this.#queue);
      this.#queue = [];
      try {
        let written = 0;
        while (written < chunk.length) written += await this.#out.write(chunk.subarray(written));
      } catch (error) {
        this.#drop(chunk, error instanceof Error ? error.message : String(error));
      } finally {
        this.#queued -= chunk.length;
      }
    }
  }

  #drop(bytes: Uint8Array, why: string): void {
    let lines = 0;
    for (const byte of bytes) if (byte === 10) lines++;
    this.options.onDrop?.(lines);
    if (!this.#warned) {
      this.#warned = true;
      (this.options.warn ?? ((line) => console.error(line)))(
        `ipintel: log lines dropped (${why}); the server carries on, counting them in ipintel_log_lines_dropped_total`,
      );
    }
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) all.set(chunk, at), at += chunk.length;
  return all;
}
