/**
 * Sliding-window rate limiter: exact within one server (its isolates share
 * the counts in a {@link RateTable}), shared through a counter store (Deno KV)
 * between servers on one KV, within a stated bound.
 *
 * The window is the sliding-window counter: usage at time t is
 * `previous × (1 − elapsed/window) + current`, over fixed windows aligned to
 * the epoch, with the rule of a true sliding window on top: a unit counts for
 * at most one window after it was spent. The time of the newest unit is kept
 * (to a tenth of a second, rounded down), so once a window has passed since
 * it, nothing counts; `Retry-After` and `RateLimit-Reset` therefore never
 * exceed the window. A KV write per request would cap the service at the KV's write rate,
 * so a server admits up to an *allowance* from its own counts between syncs: a
 * tenth of what remained of the budget at its last sync (at least one unit).
 * Needing more, a request waits for a sync (at most SYNC_WAIT_MS). With N
 * servers on one KV, the budget can be overrun by at most N × (10% of the
 * limit + 1) in one window (a bulk request counting as its size); one server
 * alone never overruns it, whatever its number of workers. Refusals are always
 * decided locally: what a server has not yet seen can only add to the usage.
 *
 * The KV failing (locked, unreachable): the limiter fails open with local
 * limits. Requests stop waiting for syncs and are decided on this server's
 * counts, which stay exact for this server; the counts are written once the
 * KV takes writes again. Each failed sync is reported to `onSyncError`.
 */

import type { CounterUpdate, RateCounterStore } from "../../data/store/rate_counts.ts";
import { sha256Hex } from "../../data/store/sha256.ts";
import {
  DEFAULT_CAPACITY,
  FIELDS as F,
  LOCAL,
  OCCUPIED,
  type RateRegion,
  RateTable,
  rateTableBuffer,
  type RegionName,
  SYNCED,
  WANTED,
} from "./rate_table.ts";

export type { RegionName } from "./rate_table.ts";

/** The answer for one charge, with what the RateLimit headers report. */
export interface RateDecision {
  kind: "allowed" | "refused";
  limit: number;
  /** Whole units left in the window after this charge. */
  remaining: number;
  /** Seconds until one more unit of the budget frees up (0 when nothing is used). */
  resetSeconds: number;
  /** On refusal: seconds until a charge of this cost fits (Infinity: it never can). */
  retryAfterSeconds: number;
}

export interface RateLimiterOptions {
  counters: RateCounterStore;
  /** The server's shared counts (every isolate of a server passes the same); default a new table. */
  table?: RateTable;
  /** Milliseconds since the epoch; tests pass a fixed clock. */
  now?: () => number;
  /** Where a failed sync is reported; the limiter then goes on with local limits. */
  onSyncError?: (error: unknown) => void;
  /** Called after each sync that reached the KV. */
  onSyncSuccess?: () => void;
  /**
   * False: this isolate never syncs; another isolate sharing the table does
   * (with `IPINTEL_KV=:memory:` each isolate has a KV of its own, and only
   * one of them may hold the server's counts). Default true.
   */
  syncs?: boolean;
}

const ALLOWANCE_SHARE = 0.1;
/** How old a used caller's shared counts may get before a background sync reads them again. */
const REFRESH_MS = 1000;
/** The longest a request waits for a sync; then it is decided on this server's counts. */
export const SYNC_WAIT_MS = 1000;
/** A sync lock held this long is taken over (its isolate stopped while syncing). */
const STALE_SYNC_MS = 30_000;
/** With nothing to write for this long, a sync writes a heartbeat (readiness sees the KV take writes). */
export const HEARTBEAT_MS = 1000;

/**
 * Per region: whether a caller's first request waits for its counts in the KV
 * (keys: a restarted server knows what the key already used; anonymous
 * callers: never delayed, decided on local counts until the next sync), and
 * whether the last use is written (for `keys list`).
 */
const POLICY: Readonly<Record<RegionName, { waitFirst: boolean; lastUse: boolean }>> = {
  key: { waitFirst: true, lastUse: true },
  anonymous: { waitFirst: false, lastUse: false },
};
const REGIONS: readonly RegionName[] = ["key", "anonymous"];

/** The id of a caller's counts in the KV: the first 64 bits of the SHA-256 of its id, in hex. */
export function counterId(caller: string): string {
  return sha256Hex(caller).slice(0, 16);
}

interface Hash {
  lo: number;
  hi: number;
}

/** One counter a sync reads (and adds to), and the slot it belongs to. */
interface SyncItem {
  slot: number;
  hash: Hash;
  window: number;
  index: number;
  add: number;
}

type Mode = "try" | "synced" | "force";

export class RateLimiter {
  readonly table: RateTable;
  private readonly counters: RateCounterStore;
  private readonly now: () => number;
  private readonly onSyncError: (error: unknown) => void;
  private readonly onSyncSuccess: () => void;
  /** Hashes of keyed callers (few, and asked on every request). */
  private readonly keyHashes = new Map<string, Hash>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly running = new Set<Promise<void>>();
  private readonly syncs: boolean;

  constructor(options: RateLimiterOptions) {
    this.counters = options.counters;
    this.now = options.now ?? Date.now;
    this.table = options.table ?? new RateTable(rateTableBuffer(DEFAULT_CAPACITY, this.now()));
    this.onSyncError = options.onSyncError ?? ((error) => console.error(error));
    this.onSyncSuccess = options.onSyncSuccess ?? (() => {});
    this.syncs = options.syncs ?? true;
  }

  /**
   * Charges `cost` units now from this server's counts: the decision (an
   * admitted charge is counted), or null when the shared count must be read
   * first (use {@link consume}; nothing is counted then).
   */
  tryConsume(
    caller: string,
    limit: number,
    windowSeconds: number,
    cost = 1,
    region: RegionName = "key",
  ): RateDecision | null {
    return this.attempt(caller, limit, windowSeconds, cost, region, "try");
  }

  /** Charges `cost` units now, waiting for a sync when this server's counts cannot decide. */
  async consume(
    caller: string,
    limit: number,
    windowSeconds: number,
    cost = 1,
    region: RegionName = "key",
  ): Promise<RateDecision> {
    const deadline = Date.now() + SYNC_WAIT_MS;
    let mode: Mode = "try";
    // Requests that waited for the same sync share its allowance; the first admission after a
    // sync always fits, so every sync admits at least one request (or the budget is spent and
    // the rest are refused): the loop ends, and the deadline bounds it anyway.
    for (;;) {
      const decision = this.attempt(caller, limit, windowSeconds, cost, region, mode);
      if (decision) return decision;
      const left = deadline - Date.now();
      if (left <= 0) return this.attempt(caller, limit, windowSeconds, cost, region, "force")!;
      await this.syncSoon(region, left);
      mode = "synced";
    }
  }

  /**
   * What charging `cost` units would decide now from this server's counts,
   * counting nothing: null when this server holds no counts for the caller.
   * An admission check (a spent caller refused before its request is read);
   * the charge that follows decides exactly.
   */
  peek(
    caller: string,
    limit: number,
    windowSeconds: number,
    cost = 1,
    region: RegionName = "key",
  ): RateDecision | null {
    return this.#readSlot(
      caller,
      windowSeconds,
      region,
      null,
      (r, slot) => decide(r, slot, limit, cost, this.now()),
    );
  }

  /** A caller's usage now (units in the sliding window) from this server's counts; 0 if unknown. */
  usage(caller: string, windowSeconds: number, region: RegionName = "anonymous"): number {
    return this.#readSlot(
      caller,
      windowSeconds,
      region,
      0,
      (r, slot) => usageOf(r, slot, this.now()).used,
    );
  }

  /** Whether this server holds counts for a caller. */
  has(caller: string, windowSeconds: number, region: RegionName = "anonymous"): boolean {
    return this.#readSlot(caller, windowSeconds, region, false, () => true);
  }

  /**
   * `read` over a caller's slot, locked while it reads; `missing` when this server holds no
   * counts for the caller (the slot is looked up, never made).
   */
  #readSlot<T>(
    caller: string,
    windowSeconds: number,
    region: RegionName,
    missing: T,
    read: (r: RateRegion, slot: number) => T,
  ): T {
    const r = this.table.regions[region];
    const hash = this.hash(caller, region);
    const slot = r.acquire(hash.lo, hash.hi, windowSeconds, false);
    if (slot < 0) return missing;
    try {
      return read(r, slot);
    } finally {
      r.unlock(slot);
    }
  }

  /** Adds one to a local tally (never written to the KV), such as new callers seen per prefix. */
  tally(name: string, windowSeconds: number, region: RegionName = "anonymous"): void {
    const r = this.table.regions[region];
    const hash = this.hash(name, region);
    const slot = r.acquire(hash.lo, hash.hi, windowSeconds, true, LOCAL);
    try {
      const now = this.now();
      r.set(slot, F.LAST_USED, r.tick(now));
      admit(r, slot, now, 1);
    } finally {
      r.unlock(slot);
    }
  }

  /**
   * Writes this server's pending counts to the store and reads every active
   * caller's shared counts, in both regions. A call made while another sync
   * runs (in any isolate of the server) waits for it, then runs its own.
   */
  async sync(): Promise<void> {
    if (!this.syncs) return;
    for (const name of REGIONS) {
      const r = this.table.regions[name];
      for (;;) {
        const generation = r.generation;
        if (r.tryLockSync(this.now(), STALE_SYNC_MS)) {
          await this.runSync(name);
          break;
        }
        await r.waitSync(generation, STALE_SYNC_MS);
      }
    }
  }

  /**
   * Syncs in the background: every `intervalMs`, each region whose last sync
   * (by any isolate of the server) is that old. No timer keeps the process alive.
   */
  start(intervalMs: number): void {
    if (this.timer !== null || !this.syncs) return;
    const timer = setInterval(() => {
      for (const name of REGIONS) {
        const r = this.table.regions[name];
        const now = this.now();
        if (now - r.lastAttempt < intervalMs * 0.9) continue;
        if (r.tryLockSync(now, STALE_SYNC_MS)) this.track(this.runSync(name).catch(() => {}));
      }
    }, intervalMs);
    Deno.unrefTimer(timer);
    this.timer = timer;
  }

  /** Stops the background sync and writes what is still pending. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(this.running);
    await this.sync();
  }

  /**
   * Why the rate counts are not reaching the KV, or null when they are: the
   * last sync failed, or the last write (counts or heartbeat) is older than `maxAgeMs`.
   */
  syncProblem(maxAgeMs: number): string | null {
    const now = this.now();
    const keyRegion = this.table.regions.key;
    const age = now - keyRegion.lastSuccess;
    if (keyRegion.lastSuccess === 0 && now - keyRegion.epoch < maxAgeMs) return null; // starting
    if (age > maxAgeMs) {
      return `rate counts not written for ${Math.round(age / 1000)} s (the limit is ${
        maxAgeMs / 1000
      } s)`;
    }
    for (const name of REGIONS) {
      if (this.table.regions[name].lastFailed) return `the last sync of rate counts failed`;
    }
    return null;
  }

  private track(work: Promise<void>): void {
    this.running.add(work);
    work.finally(() => this.running.delete(work));
  }

  private hash(caller: string, region: RegionName): Hash {
    if (region === "key") {
      let hash = this.keyHashes.get(caller);
      if (hash === undefined) {
        if (this.keyHashes.size > 100_000) this.keyHashes.clear();
        this.keyHashes.set(caller, hash = hashOf(counterId(caller)));
      }
      return hash;
    }
    return hashOf(counterId(caller));
  }

  private attempt(
    caller: string,
    limit: number,
    windowSeconds: number,
    cost: number,
    region: RegionName,
    mode: Mode,
  ): RateDecision | null {
    const r = this.table.regions[region];
    const hash = this.hash(caller, region);
    const now = this.now();
    const slot = r.acquire(hash.lo, hash.hi, windowSeconds, true);
    try {
      r.set(slot, F.LAST_USED, r.tick(now));
      r.set(slot, F.LIMIT, limit);
      const flags = r.get(slot, F.FLAGS);
      const synced = (flags & SYNCED) !== 0;
      const mayWait = mode !== "force" && !degraded(r, now);
      if (!synced && POLICY[region].waitFirst && mayWait) {
        r.set(slot, F.FLAGS, flags | WANTED);
        return null;
      }
      const decision = decide(r, slot, limit, cost, now);
      if (decision.kind === "allowed") {
        const since = r.get(slot, F.SINCE_SYNC);
        const allowance = synced ? r.get(slot, F.ALLOWANCE) : allowanceOf(limit);
        const fits = since + cost <= allowance || (mode === "synced" && since === 0);
        if (!fits && mayWait) {
          r.set(slot, F.FLAGS, flags | WANTED);
          return null;
        }
        admit(r, slot, now, cost);
      }
      return decision;
    } finally {
      r.unlock(slot);
    }
  }

  /** A sync of `region` within `timeoutMs`: runs one, or waits for the one under way. */
  private async syncSoon(region: RegionName, timeoutMs: number): Promise<void> {
    const r = this.table.regions[region];
    const generation = r.generation;
    if (!this.syncs || !r.tryLockSync(this.now(), STALE_SYNC_MS)) {
      return await r.waitSync(generation, timeoutMs);
    }
    const work = this.runSync(region).catch(() => {});
    this.track(work);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
    await Promise.race([work, late]);
    clearTimeout(timer);
  }

  /** One sync of a region whose sync lock this isolate holds; releases it. */
  private async runSync(name: RegionName): Promise<void> {
    const r = this.table.regions[name];
    let wrote = false;
    try {
      wrote = await this.syncOnce(name);
      if (wrote) this.onSyncSuccess();
      r.unlockSync(true, wrote, this.now());
    } catch (error) {
      r.unlockSync(false, false, this.now());
      this.onSyncError(error);
    }
  }

  /** Writes and reads the region's counts; true when the store was reached. */
  private async syncOnce(name: RegionName): Promise<boolean> {
    const r = this.table.regions[name];
    const now = this.now();
    const tick = r.tick(now);
    const { items, updates } = await collect(r, now, tick, POLICY[name].lastUse);
    if (items.length === 0) {
      if (name !== "key" || now - r.lastSuccess < HEARTBEAT_MS) return false;
      await this.counters.heartbeat();
      return true;
    }
    const totals = await this.counters.sync(updates);
    await apply(r, items, totals, tick, this.now());
    return true;
  }
}

/** The allowance of a caller this server has not synced yet. */
function allowanceOf(remaining: number): number {
  return remaining > 0 ? Math.max(1, Math.floor(remaining * ALLOWANCE_SHARE)) : 0;
}

/** The KV is failing, or a sync has been under way for longer than a request may wait. */
function degraded(r: RateRegion, now: number): boolean {
  if (r.lastFailed) return true;
  const since = r.syncingSince();
  return since !== null && now - since > SYNC_WAIT_MS;
}

/** Units counted in fixed window `index`: what the KV said plus what is not written yet. */
function countIn(r: RateRegion, slot: number, index: number): number {
  const p = index & 1;
  if (r.get(slot, F.INDEX + p) !== (index | 0)) return 0;
  return r.get(slot, F.SHARED + p) + r.get(slot, F.PENDING + p);
}

function usageOf(r: RateRegion, slot: number, now: number) {
  const window = r.get(slot, F.WINDOW);
  const seconds = now / 1000;
  const index = Math.floor(seconds / window);
  const spent = lastSpent(r, slot);
  // Every unit of the previous window was spent by `spent`: a window on, none counts.
  const expired = spent !== null && spent < index * window * 1000 && now >= spent + window * 1000;
  const previous = expired ? 0 : countIn(r, slot, index - 1);
  const current = countIn(r, slot, index);
  const elapsed = seconds - index * window;
  return {
    previous,
    current,
    elapsed,
    window,
    /** Seconds from now until every unit counted now has been spent a window ago (null: unknown). */
    allFree: spent === null ? null : Math.max(0, (spent + window * 1000 - now) / 1000),
    used: slidingUsage(previous, current, elapsed, window),
  };
}

/** When the newest unit counted for a slot was spent (ms since the epoch), or null if unknown. */
function lastSpent(r: RateRegion, slot: number): number | null {
  const stored = r.get(slot, F.LAST_SPENT);
  return stored === 0 ? null : r.epoch + (stored - 1) * 100;
}

/**
 * Records that units were spent at `atMs` (rounded down to a tenth of a second:
 * a unit may free a tenth early, never late). Times the field cannot hold (a
 * clock before the table's epoch) leave it as it was: the counter alone decides.
 */
function markSpent(r: RateRegion, slot: number, atMs: number): void {
  const stored = Math.floor((atMs - r.epoch) / 100) + 1;
  if (stored < 1 || stored > 2 ** 31 - 1) return;
  if (stored > r.get(slot, F.LAST_SPENT)) r.set(slot, F.LAST_SPENT, stored);
}

/** Usage in the sliding window: the previous fixed window weighted by the share of it still inside. */
export function slidingUsage(
  previous: number,
  current: number,
  elapsed: number,
  window: number,
): number {
  return previous * (1 - elapsed / window) + current;
}

function decide(
  r: RateRegion,
  slot: number,
  limit: number,
  cost: number,
  now: number,
): RateDecision {
  const { previous, current, elapsed, window, used, allFree } = usageOf(r, slot, now);
  const allowed = used + cost <= limit;
  const usedAfter = allowed ? used + cost : used;
  const currentAfter = allowed ? current + cost : current;
  // Once a unit is admitted now, every counted unit is free one window from now.
  const freeAfter = allowed ? window : allFree;
  /** The counter's answer, but never after every counted unit is a window old. */
  const until = (wait: number, free: number | null) =>
    free === null || wait === Infinity ? wait : Math.min(wait, free);
  return {
    kind: allowed ? "allowed" : "refused",
    limit,
    remaining: Math.max(0, Math.floor(limit - usedAfter + 1e-9)),
    resetSeconds: usedAfter < 1 ? 0 : Math.ceil(
      until(waitSeconds(previous, currentAfter, elapsed, window, usedAfter - 1 + 1e-9), freeAfter),
    ),
    retryAfterSeconds: allowed ? 0 : Math.max(
      1,
      Math.ceil(until(waitSeconds(previous, current, elapsed, window, limit - cost), allFree)),
    ),
  };
}

/** Counts `cost` admitted units in the current fixed window (not yet written to the KV). */
function admit(r: RateRegion, slot: number, now: number, cost: number): void {
  const index = Math.floor(now / 1000 / r.get(slot, F.WINDOW));
  const p = index & 1;
  if (r.get(slot, F.INDEX + p) !== (index | 0)) {
    // The window two back held this place: its counts no longer matter here.
    r.set(slot, F.INDEX + p, index | 0);
    r.set(slot, F.SHARED + p, 0);
    r.set(slot, F.PENDING + p, 0);
  }
  r.set(slot, F.PENDING + p, Math.min(2 ** 31 - 1, r.get(slot, F.PENDING + p) + cost));
  r.set(slot, F.SINCE_SYNC, r.get(slot, F.SINCE_SYNC) + cost);
  markSpent(r, slot, now);
}

/**
 * What a sync reads and writes: each caller with counts to write, a request
 * waiting, or counts read more than REFRESH_MS ago and used since (so that
 * RateLimit-Remaining stays near the truth). Idle callers with nothing to
 * write are freed.
 */
async function collect(r: RateRegion, now: number, tick: number, lastUse: boolean) {
  const items: SyncItem[] = [];
  const updates: CounterUpdate[] = [];
  let visited = 0;
  for (const slot of r.occupiedSlots()) {
    if ((++visited & YIELD_EVERY) === 0) await yieldToRequests();
    r.lock(slot);
    try {
      const flags = r.get(slot, F.FLAGS);
      if ((flags & OCCUPIED) === 0) continue;
      const window = r.get(slot, F.WINDOW);
      const index = Math.floor(now / 1000 / window);
      const local = (flags & LOCAL) !== 0;
      const pending = local ? 0 : r.get(slot, F.PENDING) + r.get(slot, F.PENDING + 1);
      const lastUsed = r.get(slot, F.LAST_USED);
      if (pending === 0 && tick - lastUsed > window * 20) {
        r.free(slot); // idle for two windows: nothing of it counts any more
        continue;
      }
      if (local) continue;
      const syncedAt = r.get(slot, F.SYNCED_AT);
      const synced = (flags & SYNCED) !== 0;
      const stale = lastUsed > syncedAt && tick - syncedAt >= REFRESH_MS / 100;
      if (pending === 0 && (flags & WANTED) === 0 && synced && !stale) continue;
      const hash = { lo: r.get(slot, F.HASH_LO), hi: r.get(slot, F.HASH_HI) };
      // The previous window is read until every server has written its last counts there.
      const windowStart = index * window * 1000;
      const readPrevious = !synced || r.epoch + syncedAt * 100 < windowStart + 2 * REFRESH_MS;
      const indexes = readPrevious ? [index - 1, index] : [index];
      for (const p of [0, 1]) {
        const held = r.get(slot, F.INDEX + p);
        if (r.get(slot, F.PENDING + p) > 0 && !indexes.some((i) => (i | 0) === held)) {
          indexes.unshift(held); // an older window, not written yet (the KV was failing)
        }
      }
      const caller = hexOf(hash);
      for (const i of indexes) {
        const add = r.get(slot, F.INDEX + (i & 1)) === (i | 0)
          ? r.get(slot, F.PENDING + (i & 1))
          : 0;
        items.push({ slot, hash, window, index: i, add });
        updates.push({
          caller,
          windowSeconds: window,
          windowIndex: i,
          add,
          lastUsed: lastUse && add > 0 ? r.epoch + lastUsed * 100 : null,
        });
      }
    } finally {
      r.unlock(slot);
    }
  }
  return { items, updates };
}

/** Takes the totals a sync read into the slots whose callers still hold them. */
async function apply(
  r: RateRegion,
  items: SyncItem[],
  totals: number[],
  tick: number,
  now: number,
) {
  for (let start = 0, batch = 0; start < items.length;) {
    if ((++batch & YIELD_EVERY) === 0) await yieldToRequests();
    const { slot, hash, window } = items[start]!;
    let end = start;
    while (end < items.length && items[end]!.slot === slot) end++;
    r.lock(slot);
    try {
      const same = r.get(slot, F.HASH_LO) === hash.lo && r.get(slot, F.HASH_HI) === hash.hi &&
        r.get(slot, F.WINDOW) === window && (r.get(slot, F.FLAGS) & OCCUPIED) !== 0;
      if (!same) continue; // evicted meanwhile: what it had was written
      for (let i = start; i < end; i++) {
        const { index, add } = items[i]!;
        const p = index & 1;
        const held = r.get(slot, F.INDEX + p);
        const total = Math.min(2 ** 31 - 1, totals[i]!);
        // Another server spent units in that window, at the latest by now or the window's end.
        const known = held === (index | 0) ? r.get(slot, F.SHARED + p) : 0;
        if (total > known + add) {
          markSpent(r, slot, Math.min(now, (index + 1) * window * 1000 - 1));
        }
        if (held === (index | 0)) {
          r.set(slot, F.PENDING + p, r.get(slot, F.PENDING + p) - add);
          r.set(slot, F.SHARED + p, total);
        } else if (((index | 0) - held) > 0) {
          r.set(slot, F.INDEX + p, index | 0);
          r.set(slot, F.SHARED + p, total);
          r.set(slot, F.PENDING + p, 0);
        }
      }
      r.set(slot, F.FLAGS, (r.get(slot, F.FLAGS) | SYNCED) & ~WANTED);
      r.set(slot, F.SYNCED_AT, tick);
      // What was admitted while the sync ran is still pending: it counts against the allowance.
      r.set(slot, F.SINCE_SYNC, r.get(slot, F.PENDING) + r.get(slot, F.PENDING + 1));
      const remaining = r.get(slot, F.LIMIT) - usageOf(r, slot, now).used;
      r.set(slot, F.ALLOWANCE, allowanceOf(remaining));
    } finally {
      r.unlock(slot);
      start = end;
    }
  }
}

/** A sync of a large table lets requests in between parts of this many callers (minus one). */
const YIELD_EVERY = 4095;

/** A macrotask: requests waiting on the event loop are served before the sync goes on. */
function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function hashOf(hex: string): Hash {
  return { lo: parseInt(hex.slice(0, 8), 16) | 0, hi: parseInt(hex.slice(8, 16), 16) | 0 };
}

function hexOf({ lo, hi }: Hash): string {
  return (lo >>> 0).toString(16).padStart(8, "0") + (hi >>> 0).toString(16).padStart(8, "0");
}

/**
 * Seconds from now until usage falls to `target` or below, with no new
 * admissions: the previous window's weight decays through this window, then
 * the current window's through the next. Infinity when `target` < 0.
 */
export function waitSeconds(
  previous: number,
  current: number,
  elapsed: number,
  window: number,
  target: number,
): number {
  if (target < 0) return Infinity;
  if (current <= target) {
    if (previous === 0 || previous * (1 - elapsed / window) + current <= target) return 0;
    return Math.max(0, window - elapsed - ((target - current) * window) / previous);
  }
  return window - elapsed + window * (1 - target / current);
}
