/**
 * Sliding-window rate limiter that counts in memory and shares its counts
 * through a counter store (Deno KV), so that instances on one KV share one budget.
 *
 * The window is the sliding-window counter: usage at time t is
 * `previous × (1 − elapsed/window) + current`, over fixed windows aligned to
 * the epoch. A KV write per request would cap the service near 10k requests/s,
 * so an instance admits up to an *allowance* locally between syncs: a tenth of
 * what remained of the budget at its last sync (at least one request). Needing
 * more, a request waits for a sync. With N instances on one KV, the budget can
 * be overrun by at most N × (10% of the limit + 1) in one window (a bulk
 * request counting as its size); one instance alone never overruns it. Refusals are always decided locally: what
 * an instance has not yet seen can only add to the usage it knows.
 */

import type { RateCounterStore } from "../store/rate_counts.ts";

/** The answer for one request, with what the RateLimit headers report. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Whole requests left in the window after this one. */
  remaining: number;
  /** Seconds until one more unit of the budget frees up (0 when nothing is used). */
  resetSeconds: number;
  /** On refusal: seconds until a request of this cost fits (Infinity: it never can). */
  retryAfterSeconds: number;
}

export interface RateLimiterOptions {
  counters: RateCounterStore;
  /** Milliseconds since the epoch; tests pass a fixed clock. */
  now?: () => number;
  /** Where a failed sync is reported; the limiter then goes on with what it knows. */
  onSyncError?: (error: unknown) => void;
}

/** Counts of one caller in one window, as last read from the store plus local admissions. */
interface WindowCounts {
  shared: number;
  pending: number;
}

interface CallerState {
  caller: string;
  windowSeconds: number;
  windows: Map<number, WindowCounts>;
  /** Requests admitted since the last sync, and how many may be before the next. */
  sinceSync: number;
  allowance: number;
  /** The limit of the latest request: the allowance is a share of what it leaves. */
  limit: number;
  synced: boolean;
  /** When the last sync read this caller's counts, and when a request last used them. */
  syncedAt: number;
  lastUsed: number;
  /** A request is waiting for this caller's counts: the next sync must read them. */
  wanted: boolean;
}

const ALLOWANCE_SHARE = 0.1;
/** How old a used caller's shared counts may get before a background sync reads them again. */
const REFRESH_MS = 1000;

export class RateLimiter {
  private readonly states = new Map<string, CallerState>();
  private readonly counters: RateCounterStore;
  private readonly now: () => number;
  private readonly onSyncError: (error: unknown) => void;
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(options: RateLimiterOptions) {
    this.counters = options.counters;
    this.now = options.now ?? Date.now;
    this.onSyncError = options.onSyncError ?? ((error) => console.error(error));
  }

  /**
   * Decides from memory alone, or returns null when the caller's budget must
   * first be read from the store (use {@link consume}). An admitted request is counted.
   */
  tryConsume(caller: string, limit: number, windowSeconds: number, cost = 1): RateDecision | null {
    const state = this.states.get(stateKey(caller, windowSeconds));
    if (!state?.synced) return null;
    const decision = this.decide(state, limit, cost);
    if (decision.allowed && state.sinceSync + cost > state.allowance) return null;
    if (decision.allowed) this.admit(state, cost);
    return decision;
  }

  /** Decides after a sync when memory alone cannot; an admitted request is counted. */
  async consume(
    caller: string,
    limit: number,
    windowSeconds: number,
    cost = 1,
  ): Promise<RateDecision> {
    const fast = this.tryConsume(caller, limit, windowSeconds, cost);
    if (fast) return fast;
    const state = this.stateOf(caller, windowSeconds, limit);
    // Requests that waited for the same sync share its allowance, so that a burst
    // of concurrent requests cannot each spend the whole remainder; past it they
    // wait for the next sync. The first admission after a sync always fits, so
    // every sync admits at least one request (or the budget is spent and the
    // rest are refused): the loop ends.
    for (;;) {
      state.wanted = true;
      let synced = true;
      try {
        await this.sync();
      } catch (error) {
        this.onSyncError(error);
        synced = false; // decide on what this instance knows
      }
      const decision = this.decide(state, limit, cost);
      const fits = state.sinceSync === 0 || state.sinceSync + cost <= state.allowance;
      if (decision.allowed && !fits && synced) continue;
      if (decision.allowed) this.admit(state, cost);
      return decision;
    }
  }

  /**
   * Writes local admissions to the store and reads every active caller's
   * shared counts. Concurrent calls share one sync; a call made during a sync
   * gets the next one, so that it sees state created after the first began.
   */
  sync(): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = this.syncOnce().finally(() => this.inFlight = null);
      return this.inFlight;
    }
    this.queued ??= this.inFlight.catch(() => {}).then(() => {
      this.queued = null;
      return this.sync();
    });
    return this.queued;
  }

  /** Syncs every `intervalMs` in the background (no timer keeps the process alive). */
  start(intervalMs: number): void {
    if (this.timer !== null) return;
    const timer = setInterval(() => {
      this.sync().catch(this.onSyncError);
    }, intervalMs);
    Deno.unrefTimer(timer);
    this.timer = timer;
  }

  /** Stops the background sync and writes what is still pending. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.sync();
  }

  private stateOf(caller: string, windowSeconds: number, limit: number): CallerState {
    const key = stateKey(caller, windowSeconds);
    let state = this.states.get(key);
    if (!state) {
      state = {
        caller,
        windowSeconds,
        windows: new Map(),
        sinceSync: 0,
        allowance: 0,
        limit,
        synced: false,
        syncedAt: 0,
        lastUsed: this.now(),
        wanted: false,
      };
      this.states.set(key, state);
    }
    return state;
  }

  private decide(state: CallerState, limit: number, cost: number): RateDecision {
    const now = this.now();
    state.lastUsed = now;
    state.limit = limit;
    const { previous, current, elapsed, window } = this.usage(state, now);
    const used = previous * (1 - elapsed / window) + current;
    const allowed = used + cost <= limit;
    const usedAfter = allowed ? used + cost : used;
    const currentAfter = allowed ? current + cost : current;
    return {
      allowed,
      limit,
      remaining: Math.max(0, Math.floor(limit - usedAfter + 1e-9)),
      resetSeconds: usedAfter < 1 ? 0 : Math.ceil(
        waitSeconds(previous, currentAfter, elapsed, window, usedAfter - 1 + 1e-9),
      ),
      retryAfterSeconds: allowed
        ? 0
        : Math.max(1, Math.ceil(waitSeconds(previous, current, elapsed, window, limit - cost))),
    };
  }

  private admit(state: CallerState, cost: number): void {
    const index = Math.floor(this.now() / 1000 / state.windowSeconds);
    const counts = countsOf(state, index);
    counts.pending += cost;
    state.sinceSync += cost;
  }

  private usage(state: CallerState, now: number) {
    const window = state.windowSeconds;
    const seconds = now / 1000;
    const index = Math.floor(seconds / window);
    const total = (i: number) => {
      const counts = state.windows.get(i);
      return counts ? counts.shared + counts.pending : 0;
    };
    return {
      previous: total(index - 1),
      current: total(index),
      elapsed: seconds - index * window,
      window,
    };
  }

  private async syncOnce(): Promise<void> {
    const now = this.now();
    const work: { state: CallerState; index: number; add: number }[] = [];
    for (const [key, state] of this.states) {
      const index = Math.floor(now / 1000 / state.windowSeconds);
      for (const [i, counts] of state.windows) {
        if (i < index - 1 && counts.pending === 0) state.windows.delete(i);
      }
      const idle = now - state.lastUsed > state.windowSeconds * 2000;
      if (idle && state.windows.size === 0) {
        this.states.delete(key);
        continue;
      }
      let pending = false;
      for (const counts of state.windows.values()) pending ||= counts.pending > 0;
      // Read a caller only when it has counts to share, a request waits for it, or it was used
      // since a read that is getting old (so that RateLimit-Remaining stays near the truth).
      const stale = state.lastUsed > state.syncedAt && now - state.syncedAt >= REFRESH_MS;
      if (!pending && !state.wanted && state.synced && !stale) continue;
      const indexes = new Set([index - 1, index]);
      for (const [i, counts] of state.windows) if (counts.pending > 0) indexes.add(i);
      for (const i of indexes) {
        work.push({ state, index: i, add: state.windows.get(i)?.pending ?? 0 });
      }
    }
    if (work.length === 0) return;
    const totals = await this.counters.sync(work.map(({ state, index, add }) => ({
      caller: state.caller,
      windowSeconds: state.windowSeconds,
      windowIndex: index,
      add,
    })));
    const touched = new Set<CallerState>();
    work.forEach(({ state, index, add }, i) => {
      const counts = countsOf(state, index);
      counts.pending -= add; // admissions made while the sync ran stay pending
      counts.shared = totals[i]!;
      touched.add(state);
    });
    for (const state of touched) {
      state.synced = true;
      state.syncedAt = now;
      state.wanted = false;
      // What was admitted while the sync ran is still pending: it counts against the allowance.
      state.sinceSync = 0;
      for (const counts of state.windows.values()) state.sinceSync += counts.pending;
      const { previous, current, elapsed, window } = this.usage(state, this.now());
      const remaining = state.limit - (previous * (1 - elapsed / window) + current);
      state.allowance = remaining > 0 ? Math.max(1, Math.floor(remaining * ALLOWANCE_SHARE)) : 0;
    }
  }
}

function stateKey(caller: string, windowSeconds: number): string {
  return `${windowSeconds}:${caller}`;
}

function countsOf(state: CallerState, index: number): WindowCounts {
  let counts = state.windows.get(index);
  if (!counts) state.windows.set(index, counts = { shared: 0, pending: 0 });
  return counts;
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
