/**
 * A request body read ahead of its answer. A pump reads the body as fast as
 * the client sends it, whether or not the answer is being read, so a client
 * that uploads its whole body before reading (Python's urllib and requests,
 * most simple clients) never waits on a server that waits on it.
 *
 * What is read ahead is the body's own bytes (8–16 bytes an IPv4 line, up to
 * 40 an IPv6 one), about a hundredth of the answer's: up to `memoryBytes` are
 * held in memory, the rest goes to a temporary file (unlinked at once, so
 * nothing is left behind), up to `spillBytes`; past them, or when no file can
 * be made (no write permission, as on Deno Deploy), the pump waits for the
 * answer to catch up: the old back-pressure, never unbounded memory.
 *
 * Pieces come out in the order they came in: the memory queue first, then the
 * file; a chunk goes to the file while the file holds unread bytes, so the
 * order is kept. The file's positions go back to 0 whenever it is drained.
 *
 * @module
 */

/** Body bytes held in memory before the rest spills to a file. */
export const READ_AHEAD_MEMORY_BYTES = 1024 * 1024;

/**
 * Body bytes a spill file holds at most: 256 MiB, about 17,000,000 IPv4 lines
 * (what a log's mix spills: docs/streamed-bulk.md). It is also what a client that
 * sends without ever reading can make one stream write to disk.
 */
export const READ_AHEAD_SPILL_BYTES = 256 * 1024 * 1024;

/** Bytes read from the spill file at once. */
const FILE_PIECE = 64 * 1024;

/**
 * What a chunk in memory is counted as beyond its bytes (its object): a client
 * sending a byte at a time must not hold a million small arrays.
 */
const CHUNK_OVERHEAD = 128;

export interface ReadAheadOptions {
  /** Bytes held in memory (default {@link READ_AHEAD_MEMORY_BYTES}); 0: one chunk ahead at most. */
  memoryBytes?: number;
  /** Bytes a temporary file may hold past them (default {@link READ_AHEAD_SPILL_BYTES}); 0: no file. */
  spillBytes?: number;
  /** Where the temporary file goes (default: the system's temporary directory). */
  spillDir?: string;
}

/** The body, read ahead: pieces in order, and when bytes last arrived. */
export class ReadAhead {
  /** performance.now() when the body last gave bytes (or the pump started). */
  lastReadAt = performance.now();
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #memoryBytes: number;
  readonly #spillBytes: number;
  readonly #spillDir: string | undefined;
  #queue: Uint8Array[] = [];
  #queueBytes = 0;
  #file: Deno.FsFile | null = null;
  #filePath: string | null = null;
  /** False once making a file failed: the pump waits instead. */
  #canSpill: boolean;
  #readAt = 0;
  #writtenTo = 0;
  /** File operations run one at a time (each seeks first). */
  #fileOps: Promise<unknown> = Promise.resolve();
  #ended = false;
  #error: unknown = null;
  #cancelled = false;
  /** Wakes whoever waits: the consumer for data, the pump for room. */
  #wake: (() => void) | null = null;
  readonly #pumping: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>, options: ReadAheadOptions = {}) {
    this.#reader = stream.getReader();
    this.#memoryBytes = options.memoryBytes ?? READ_AHEAD_MEMORY_BYTES;
    this.#spillBytes = options.spillBytes ?? READ_AHEAD_SPILL_BYTES;
    this.#spillDir = options.spillDir;
    this.#canSpill = this.#spillBytes > 0;
    this.#pumping = this.#pump();
  }

  /** Bytes read and not yet taken, in memory (chunks' overhead included) and in the file. */
  get heldBytes(): { memory: number; file: number } {
    return { memory: this.#queueBytes, file: this.#writtenTo - this.#readAt };
  }

  /**
   * Whether the body has stopped arriving for now: it ended, failed or was
   * cancelled, or the read-ahead is full (reading waits for the answer).
   */
  get settled(): boolean {
    return this.#ended || this.#error !== null || this.#cancelled || !this.#hasRoom();
  }

  /**
   * Resolves once the body is settled, or has sent nothing for `quietMs`
   * counted from `since` at the earliest.
   */
  async quiet(quietMs: number, since: number): Promise<void> {
    for (;;) {
      if (this.settled) return;
      const left = Math.max(this.lastReadAt, since) + quietMs - performance.now();
      if (left <= 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#waitForChange(),
        new Promise((resolve) => timer = setTimeout(resolve, Math.ceil(left))),
      ]);
      clearTimeout(timer);
    }
  }

  /** Whether cancel() was called (next() then gives null). */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** The next piece of the body, in order; null at its end or once cancelled. Throws the body's error. */
  async next(): Promise<Uint8Array | null> {
    for (;;) {
      if (this.#cancelled) return null;
      const piece = this.#queue.shift();
      if (piece !== undefined) {
        this.#queueBytes -= piece.length + CHUNK_OVERHEAD;
        this.#notify();
        return piece;
      }
      if (this.#writtenTo > this.#readAt) return await this.#readFile();
      if (this.#error !== null) throw this.#error;
      if (this.#ended) return null;
      await this.#waitForChange();
    }
  }

  /** Stops reading: cancels the body (unless it ended) and removes the file. */
  async cancel(): Promise<void> {
    if (!this.#cancelled) {
      this.#cancelled = true;
      this.#queue = [];
      this.#queueBytes = 0;
      if (!this.#ended) await this.#reader.cancel().catch(() => {});
      this.#notify();
      await this.#pumping;
      await this.#closeFile();
    }
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        // Room for the chunk to come: in memory, or in the file, or wait for the consumer.
        while (!this.#cancelled && !this.#hasRoom()) await this.#waitForChange();
        if (this.#cancelled) return;
        const chunk = await this.#reader.read();
        if (this.#cancelled) return;
        if (chunk.done) {
          this.#ended = true;
          return;
        }
        this.lastReadAt = performance.now();
        await this.#store(chunk.value);
      }
    } catch (error) {
      if (!this.#cancelled) this.#error = error;
    } finally {
      if (this.#ended || this.#error !== null || this.#cancelled) this.#reader.releaseLock();
      this.#notify();
    }
  }

  /** Whether a chunk read now has somewhere to go. */
  #hasRoom(): boolean {
    const memory = this.#queueBytes === 0 || this.#queueBytes < this.#memoryBytes;
    if (memory && this.#writtenTo === this.#readAt) return true;
    return this.#canSpill && this.#writtenTo - this.#readAt < this.#spillBytes;
  }

  async #store(chunk: Uint8Array): Promise<void> {
    // Memory while the file holds nothing unread (else the order would break).
    if (
      this.#writtenTo === this.#readAt &&
      (this.#queueBytes + chunk.length + CHUNK_OVERHEAD <= this.#memoryBytes || !this.#canSpill)
    ) {
      this.#keep(chunk);
    } else if (!await this.#spill(chunk)) {
      this.#keep(chunk); // no file after all: this one chunk past the bound, then the pump waits
    }
    this.#notify();
  }

  #keep(chunk: Uint8Array): void {
    this.#queue.push(chunk);
    this.#queueBytes += chunk.length + CHUNK_OVERHEAD;
  }

  /** Appends `chunk` to the file (made on first use); false when no file can be made. */
  async #spill(chunk: Uint8Array): Promise<boolean> {
    if (this.#file === null) {
      try {
        const path = await Deno.makeTempFile({ prefix: "ipintel-bulk-", dir: this.#spillDir });
        this.#file = await Deno.open(path, { read: true, write: true });
        this.#filePath = path;
        // Unlinked now: the open file stays usable and nothing is left if the process dies.
        await Deno.remove(path).then(() => this.#filePath = null, () => {});
      } catch {
        this.#canSpill = false;
        return false;
      }
    }
    const file = this.#file;
    await this.#serially(async () => {
      await file.seek(this.#writtenTo, Deno.SeekMode.Start);
      for (let at = 0; at < chunk.length;) at += await file.write(chunk.subarray(at));
      this.#writtenTo += chunk.length;
    });
    return true;
  }

  async #readFile(): Promise<Uint8Array> {
    const file = this.#file!;
    return await this.#serially(async () => {
      const buffer = new Uint8Array(Math.min(FILE_PIECE, this.#writtenTo - this.#readAt));
      await file.seek(this.#readAt, Deno.SeekMode.Start);
      let n = 0;
      while (n < buffer.length) {
        const got = await file.read(buffer.subarray(n));
        if (got === null) throw new Error("The bulk body's temporary file ended early");
        n += got;
      }
      this.#readAt += n;
      // Drained: the next spill starts at the beginning again, so the file never grows past the lag.
      if (this.#readAt === this.#writtenTo) this.#readAt = this.#writtenTo = 0;
      this.#notify();
      return buffer;
    });
  }

  #serially<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#fileOps.then(op);
    this.#fileOps = run.catch(() => {});
    return run;
  }

  async #closeFile(): Promise<void> {
    await this.#fileOps;
    try {
      this.#file?.close();
    } catch { /* closed */ }
    this.#file = null;
    if (this.#filePath !== null) await Deno.remove(this.#filePath).catch(() => {});
    this.#filePath = null;
  }

  #waitForChange(): Promise<void> {
    return new Promise((resolve) => {
      const previous = this.#wake;
      this.#wake = () => {
        previous?.();
        resolve();
      };
    });
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
