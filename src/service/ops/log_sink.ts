/**
 * Log output that never stops or holds up the server: the access log on
 * stdout, error details on stderr.
 */

import { concatBytes } from "../../base/bytes.ts";

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
      const chunk = this.#queue.length === 1 ? this.#queue[0]! : concatBytes(this.#queue);
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
