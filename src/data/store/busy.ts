/**
 * The one rule for a busy KV (docs/operations.md, "A busy KV"): every write to the local Deno KV
 * (a `keys` command, a server's rate-count sync, its start-up record) that meets SQLite's
 * "database is locked" tries again after a jittered, growing pause, for a bounded time, and
 * says so only when it gives up: a {@link KvBusyError} naming the KV and the cause.
 *
 * Deno KV waits for a lock another process holds, but a read-check-write whose snapshot another
 * connection's write has overtaken fails at once (SQLite cannot wait for that one): a `keys set`
 * beside a server syncing its counts met it in CI. Whatever the path, it comes here.
 */

/** How long a write keeps trying a busy KV before it gives up (ms, from its first try). */
export const KV_BUSY_BUDGET_MS = 10_000;
/** The first pause (ms); each later one may be twice as long, up to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 20;
const MAX_PAUSE_MS = 1000;

/** True for SQLite's busy and locked errors, as Deno KV reports them. */
export function isKvBusy(error: unknown): boolean {
  return error instanceof Error &&
    /database (?:table )?is locked|database is busy|SQLITE_BUSY|SQLITE_LOCKED/i.test(error.message);
}

/** A write that met a busy KV for longer than its budget. */
export class KvBusyError extends Error {
  constructor(readonly location: string, elapsedMs: number, override readonly cause: Error) {
    super(
      `The Deno KV at ${JSON.stringify(location)} stayed busy for ${
        (elapsedMs / 1000).toFixed(1)
      } s (another process holds its write lock): ${cause.message}`,
    );
    this.name = "KvBusyError";
  }
}

export interface BusyRetryOptions {
  /** Where the KV lives, for the error (a path, `:memory:` or a URL). */
  location?: string;
  /** Give up after this long (ms). */
  budgetMs?: number;
  /** Injected in tests: the clock, the pause and the jitter. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Retries operations on one KV while it is busy; see the module doc. */
export class BusyRetry {
  readonly location: string;
  readonly budgetMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;

  constructor(options: BusyRetryOptions = {}) {
    this.location = options.location ?? "(unnamed)";
    this.budgetMs = options.budgetMs ?? KV_BUSY_BUDGET_MS;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ??
      ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
  }

  /**
   * Runs `op` (which must be safe to run again: a whole read-check-write, or a commit), again
   * while it throws a busy error, until `budgetMs` (default: this retry's) has passed.
   * Other errors pass through at once.
   */
  async run<T>(op: () => Promise<T>, budgetMs: number = this.budgetMs): Promise<T> {
    const start = this.#now();
    for (let attempt = 0;; attempt++) {
      try {
        return await op();
      } catch (error) {
        if (!isKvBusy(error)) throw error;
        const elapsed = this.#now() - start;
        if (elapsed >= budgetMs) throw new KvBusyError(this.location, elapsed, error as Error);
        // Half fixed, half random: writers that met the same lock do not come back in step.
        const cap = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** attempt);
        await this.#sleep(Math.min(budgetMs - elapsed, cap / 2 + this.#random() * cap / 2));
      }
    }
  }
}
