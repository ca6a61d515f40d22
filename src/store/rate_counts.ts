/**
 * Shared request counters for the rate limiter: one counter per caller and
 * fixed window, `["rate", caller, windowSeconds, windowIndex]` in Deno KV, so
 * that every server on one KV adds to and reads the same budget. `caller` is
 * the limiter's counter id (a hash of the caller: never an API key, and the
 * same on every server).
 *
 * Counters are written with check-and-set (KV `sum` cannot expire), each with
 * `expireIn` of two windows, so idle callers leave nothing behind. A caller's
 * last use, when asked for, is `["rate-used", caller]` (no expiry; `keys
 * delete` removes it). A sync is cut into chunks of CHUNK counters, each one
 * atomic commit, run PARALLEL at a time.
 */

/** One counter and what to add to it (0 to only read it). */
export interface CounterUpdate {
  caller: string;
  windowSeconds: number;
  windowIndex: number;
  add: number;
  /** When the caller was last charged (ms), to keep as its last use; null: not kept. */
  lastUsed: number | null;
}

export interface RateCounterStore {
  /** Adds each `add` to its counter and returns every counter's total, in order. */
  sync(updates: readonly CounterUpdate[]): Promise<number[]>;
  /** One write that changes nothing else: proves the store takes writes. */
  heartbeat(): Promise<void>;
}

/** Counters per atomic commit (Deno KV allows 100 checks per commit, 10 keys per getMany). */
const CHUNK = 100;
const GET_MANY = 10;
/** Commits in flight at once. */
const PARALLEL = 8;
const MAX_ATTEMPTS = 20;
/** How long a chunk retries a busy KV before the sync fails. */
const BUSY_RETRY_MS = 1000;

const counterKey = (u: Pick<CounterUpdate, "caller" | "windowSeconds" | "windowIndex">) => [
  "rate",
  u.caller,
  u.windowSeconds,
  u.windowIndex,
];
const lastUsedKey = (caller: string) => ["rate-used", caller];
const HEARTBEAT_KEY = ["health", "rate-sync"];

/** Counters in a Deno KV handle opened by the caller. */
export class KvRateCounters implements RateCounterStore {
  constructor(private readonly kv: Deno.Kv) {}

  async sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    const totals = new Array<number>(updates.length);
    let next = 0;
    // PARALLEL lanes, each taking the next chunk until none is left.
    const lane = async () => {
      while (next < updates.length) {
        const start = next;
        next += CHUNK;
        const chunk = updates.slice(start, start + CHUNK);
        const values = await this.syncChunk(chunk);
        values.forEach((value, i) => totals[start + i] = value);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, lane));
    return totals;
  }

  async heartbeat(): Promise<void> {
    await this.kv.set(HEARTBEAT_KEY, Date.now(), { expireIn: 60_000 });
  }

  /** The totals of some counters (absent: 0), for `keys list`. */
  async read(
    counters: readonly Pick<CounterUpdate, "caller" | "windowSeconds" | "windowIndex">[],
  ): Promise<number[]> {
    const entries = await this.kv.getMany<number[]>(counters.map(counterKey));
    return entries.map((entry) => typeof entry.value === "number" ? entry.value : 0);
  }

  /** A caller's last use (ms), or null when none was kept. */
  async lastUsed(caller: string): Promise<number | null> {
    const entry = await this.kv.get<Deno.KvU64>(lastUsedKey(caller));
    return entry.value ? Number(entry.value.value) : null;
  }

  /** Removes a caller's last use (its counters expire on their own). */
  async forget(caller: string): Promise<void> {
    await this.kv.delete(lastUsedKey(caller));
  }

  private async syncChunk(updates: readonly CounterUpdate[]): Promise<number[]> {
    const keys = updates.map(counterKey);
    const start = Date.now();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        const totals = await this.tryChunk(updates, keys);
        if (totals) return totals;
      } catch (error) {
        // Servers sharing a local KV file contend for SQLite's lock: "database is locked" at
        // once is worth another try; after SQLite's own wait (5 s), the KV is held: give up.
        if (!isBusy(error) || Date.now() - start > BUSY_RETRY_MS) throw error;
      }
      // Another server wrote first: back off a little, at random, and read again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * (attempt + 1)));
    }
    throw new Error("Could not update rate-limit counters: too many concurrent writers");
  }

  /** One read-check-write of a chunk: its totals, or null when another writer came first. */
  private async tryChunk(
    updates: readonly CounterUpdate[],
    keys: Deno.KvKey[],
  ): Promise<number[] | null> {
    const reads = [];
    for (let i = 0; i < keys.length; i += GET_MANY) {
      reads.push(this.kv.getMany<number[]>(keys.slice(i, i + GET_MANY)));
    }
    const entries = (await Promise.all(reads)).flat();
    const totals = entries.map((entry, i) =>
      (typeof entry.value === "number" ? entry.value : 0) + updates[i]!.add
    );
    const op = this.kv.atomic();
    let writes = 0;
    updates.forEach((update, i) => {
      if (update.add === 0) return;
      op.check(entries[i]!).set(keys[i]!, totals[i], { expireIn: update.windowSeconds * 2000 });
      if (update.lastUsed !== null) {
        op.max(lastUsedKey(update.caller), BigInt(Math.floor(update.lastUsed)));
      }
      writes++;
    });
    return writes === 0 || (await op.commit()).ok ? totals : null;
  }
}

function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is locked|busy/i.test(error.message);
}

/** The same counters in memory, for tests. */
export class MemoryRateCounters implements RateCounterStore {
  private readonly counts = new Map<string, number>();
  /** Writes so far (heartbeats included). */
  writes = 0;

  sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    this.writes++;
    return Promise.resolve(updates.map((update) => {
      const key = JSON.stringify(counterKey(update));
      const total = (this.counts.get(key) ?? 0) + update.add;
      this.counts.set(key, total);
      return total;
    }));
  }

  heartbeat(): Promise<void> {
    this.writes++;
    return Promise.resolve();
  }
}
