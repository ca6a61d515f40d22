/**
 * Shared request counters for the rate limiter: one counter per caller and
 * fixed window, `["rate", caller, windowSeconds, windowIndex]` in Deno KV, so
 * that every instance on one KV adds to and reads the same budget.
 *
 * Counters are written with check-and-set (KV `sum` cannot expire), each with
 * `expireIn` of two windows, so idle callers leave nothing behind.
 */

/** One counter and what to add to it (0 to only read it). */
export interface CounterUpdate {
  caller: string;
  windowSeconds: number;
  windowIndex: number;
  add: number;
}

export interface RateCounterStore {
  /** Adds each `add` to its counter and returns every counter's total, in order. */
  sync(updates: readonly CounterUpdate[]): Promise<number[]>;
}

/** Deno KV allows at most 10 keys per getMany. */
const CHUNK = 10;
const MAX_ATTEMPTS = 20;

const counterKey = (u: CounterUpdate): Deno.KvKey => [
  "rate",
  u.caller,
  u.windowSeconds,
  u.windowIndex,
];

/** Counters in a Deno KV handle opened by the caller. */
export class KvRateCounters implements RateCounterStore {
  constructor(private readonly kv: Deno.Kv) {}

  async sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    const totals: number[] = [];
    for (let start = 0; start < updates.length; start += CHUNK) {
      totals.push(...await this.syncChunk(updates.slice(start, start + CHUNK)));
    }
    return totals;
  }

  private async syncChunk(updates: readonly CounterUpdate[]): Promise<number[]> {
    const keys = updates.map(counterKey);
    let lastError: unknown = null;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        const entries = await this.kv.getMany<number[]>(keys);
        const totals = entries.map((entry, i) => (entry.value ?? 0) + updates[i]!.add);
        const op = this.kv.atomic();
        let writes = 0;
        updates.forEach((update, i) => {
          if (update.add === 0) return;
          op.check(entries[i]!).set(keys[i]!, totals[i], {
            expireIn: update.windowSeconds * 2000,
          });
          writes++;
        });
        if (writes === 0 || (await op.commit()).ok) return totals;
      } catch (error) {
        // Instances sharing a local KV file contend for SQLite's lock ("database is locked").
        if (!isBusy(error)) throw error;
        lastError = error;
      }
      // Another instance wrote first: back off a little, at random, and read again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * (attempt + 1)));
    }
    if (lastError) throw lastError;
    throw new Error("Could not update rate-limit counters: too many concurrent writers");
  }
}

function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is locked|busy/i.test(error.message);
}

/** The same counters in memory, for tests. */
export class MemoryRateCounters implements RateCounterStore {
  private readonly counts = new Map<string, number>();

  sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    return Promise.resolve(updates.map((update) => {
      const key = JSON.stringify(counterKey(update));
      const total = (this.counts.get(key) ?? 0) + update.add;
      this.counts.set(key, total);
      return total;
    }));
  }
}
