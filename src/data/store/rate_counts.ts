/**
 * Shared request counters for the rate limiter, so that every server on one
 * KV adds to and reads the same budgets. `caller` is the limiter's counter id
 * (16 hex digits of a hash of the caller: never an API key, the same on every
 * server).
 *
 * Writing one KV entry per caller costs one SQLite write each, and SQLite's
 * write rate would then bound the callers a sync can count, so the counts of
 * one fixed window are grouped into SHARDS entries by the caller's id:
 * `["rate", windowSeconds, windowIndex, shard]` → `{ [caller]: count }`. A
 * sync then writes each shard it touches once, with check-and-set (concurrent
 * servers retry), `expireIn` two windows (KV `sum` cannot expire), up to 100
 * shards per atomic commit (KV's limit on checks), PARALLEL commits at once. A shard holds at most SHARD_CALLERS callers per
 * window; a caller beyond is counted by each server alone for that window. A
 * caller's last use, when asked for (API keys), is `["rate-used", caller]`
 * (no expiry; `keys delete` removes it). Every KV call goes through a {@link BusyRetry}.
 */

import { BusyRetry } from "./busy.ts";

/** One counter and what to add to it (0 to only read it). */
export interface CounterUpdate {
  caller: string;
  windowSeconds: number;
  windowIndex: number;
  add: number;
  /** When the caller was last charged (ms), to keep as its last use; null: not kept. */
  lastUsed: number | null;
}

type CounterRef = Pick<CounterUpdate, "caller" | "windowSeconds" | "windowIndex">;

export interface RateCounterStore {
  /** Adds each `add` to its counter and returns every counter's total, in order. */
  sync(updates: readonly CounterUpdate[]): Promise<number[]>;
  /** One write that changes nothing else: proves the store takes writes. */
  heartbeat(): Promise<void>;
}

/** Shards per window: a power of two (the caller id's first hex digits pick one). */
export const SHARDS = 1024;
/** Callers one shard keeps per window (about 25 bytes each, under KV's 64 KiB per value). */
export const SHARD_CALLERS = 2000;
/** Shards per atomic commit (Deno KV allows 100 checks per commit, 10 keys per getMany). */
const CHUNK = 100;
const GET_MANY = 10;
/** Commits in flight at once. */
const PARALLEL = 4;
/**
 * Tries of one chunk against other writers. Servers syncing the same shards retry in step; the
 * back-off doubles (at random, up to 64 ms) so they fall out of step: with a fixed small
 * back-off they stay in step and collide again, until a burst on two servers uses up its tries
 * and the sync fails (tests/service/keys_limits/rate_limiter_test.ts, "a concurrent burst").
 */
const MAX_ATTEMPTS = 30;
/**
 * How long a sync's write retries a busy KV before the sync fails (shorter than the rule's
 * budget: the next sync comes 250 ms later and tries again, and `/ready` must see a KV that
 * stays held within RATE_SYNC_MAX_AGE_MS). SQLite's own wait (5 s) comes first.
 */
export const SYNC_BUSY_BUDGET_MS = 1000;

type Shard = Record<string, number>;

const shardOf = (caller: string) => parseInt(caller.slice(0, 4), 16) & (SHARDS - 1);
const shardKey = (u: CounterRef): Deno.KvKey => [
  "rate",
  u.windowSeconds,
  u.windowIndex,
  shardOf(u.caller),
];
const lastUsedKey = (caller: string) => ["rate-used", caller];
const HEARTBEAT_KEY = ["health", "rate-sync"];

/** The updates that go to one shard entry. */
interface ShardWork {
  key: Deno.KvKey;
  windowSeconds: number;
  /** Indexes into the updates. */
  members: number[];
}

/** Counters in a Deno KV handle opened by the caller. */
export class KvRateCounters implements RateCounterStore {
  constructor(private readonly kv: Deno.Kv, private readonly busy: BusyRetry = new BusyRetry()) {}

  async sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    const byShard = new Map<string, ShardWork>();
    for (let i = 0; i < updates.length; i++) {
      // A large sync lets requests in between (the event loop is theirs too).
      if ((i & 8191) === 8191) await new Promise((resolve) => setTimeout(resolve, 0));
      const update = updates[i]!;
      const shard = shardOf(update.caller);
      const id = `${update.windowSeconds}/${update.windowIndex}/${shard}`;
      let work = byShard.get(id);
      if (!work) {
        const key = ["rate", update.windowSeconds, update.windowIndex, shard];
        byShard.set(id, work = { key, windowSeconds: update.windowSeconds, members: [] });
      }
      work.members.push(i);
    }
    const shards = [...byShard.values()];
    const totals = new Array<number>(updates.length).fill(0);
    let next = 0;
    // PARALLEL lanes, each taking the next chunk of shards until none is left.
    const lane = async () => {
      while (next < shards.length) {
        const chunk = shards.slice(next, next += CHUNK);
        await this.syncChunk(updates, chunk, totals);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, lane));
    return totals;
  }

  async heartbeat(): Promise<void> {
    await this.busy.run(
      () => this.kv.set(HEARTBEAT_KEY, Date.now(), { expireIn: 60_000 }),
      SYNC_BUSY_BUDGET_MS,
    );
  }

  /** The totals of some counters (absent: 0), for `keys list`. */
  async read(counters: readonly CounterRef[]): Promise<number[]> {
    const entries = await this.busy.run(() => this.kv.getMany<Shard[]>(counters.map(shardKey)));
    return entries.map((entry, i) => countIn(entry.value, counters[i]!.caller));
  }

  /** A caller's last use (ms), or null when none was kept. */
  async lastUsed(caller: string): Promise<number | null> {
    const entry = await this.busy.run(() => this.kv.get<Deno.KvU64>(lastUsedKey(caller)));
    return entry.value ? Number(entry.value.value) : null;
  }

  /** Removes a caller's last use (its counts expire with their windows). */
  async forget(caller: string): Promise<void> {
    await this.busy.run(() => this.kv.delete(lastUsedKey(caller)));
  }

  private async syncChunk(
    updates: readonly CounterUpdate[],
    shards: readonly ShardWork[],
    totals: number[],
  ): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const tried = () => this.tryChunk(updates, shards, totals);
      if (await this.busy.run(tried, SYNC_BUSY_BUDGET_MS)) return;
      // Another server wrote first: back off at random, longer each time, and read again.
      const backOffMs = Math.random() * 2 ** Math.min(attempt + 1, 6);
      await new Promise((resolve) => setTimeout(resolve, backOffMs));
    }
    throw new Error("Could not update rate-limit counters: too many concurrent writers");
  }

  /** One read-check-write of some shards; false when another writer came first. */
  private async tryChunk(
    updates: readonly CounterUpdate[],
    shards: readonly ShardWork[],
    totals: number[],
  ): Promise<boolean> {
    const reads = [];
    for (let i = 0; i < shards.length; i += GET_MANY) {
      reads.push(this.kv.getMany<Shard[]>(shards.slice(i, i + GET_MANY).map((s) => s.key)));
    }
    const entries = (await Promise.all(reads)).flat();
    const op = this.kv.atomic();
    let writes = 0;
    shards.forEach((shard, s) => {
      const entry = entries[s]!;
      const stored = isShard(entry.value) ? entry.value : {};
      let changed: Shard | null = null;
      let size = Object.keys(stored).length;
      for (const i of shard.members) {
        const { caller, add, lastUsed } = updates[i]!;
        const total = countIn(changed ?? stored, caller) + add;
        totals[i] = total;
        if (add === 0) continue;
        if (lastUsed !== null) op.max(lastUsedKey(caller), BigInt(Math.floor(lastUsed)));
        const known = caller in (changed ?? stored);
        if (!known && size >= SHARD_CALLERS) continue; // full: this server counts it alone
        if (!known) size++;
        changed ??= { ...stored };
        changed[caller] = total;
      }
      if (changed === null) return;
      op.check(entry).set(shard.key, changed, { expireIn: shard.windowSeconds * 2000 });
      writes++;
    });
    return writes === 0 || (await op.commit()).ok;
  }
}

function isShard(value: unknown): value is Shard {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function countIn(shard: unknown, caller: string): number {
  if (!isShard(shard)) return 0;
  const count = shard[caller];
  return typeof count === "number" ? count : 0;
}

/** The same counters in memory, for tests. */
export class MemoryRateCounters implements RateCounterStore {
  private readonly counts = new Map<string, number>();
  /** Writes so far (heartbeats included). */
  writes = 0;

  sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    this.writes++;
    return Promise.resolve(updates.map((update) => {
      const key = JSON.stringify([update.caller, update.windowSeconds, update.windowIndex]);
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
