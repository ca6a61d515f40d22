/**
 * The rate counts of one server, in one SharedArrayBuffer that every isolate
 * of the server (the main one and its workers) maps: a caller's counts are the
 * same memory whichever worker answers, and every decision is taken under the
 * caller's slot lock (Atomics), so the isolates of one server admit exactly
 * what one isolate would.
 *
 * Two regions, each a fixed-size open-addressing hash table keyed by a 64-bit
 * hash of the caller id (and the window length): `key` for API keys and
 * `anonymous` for keyless client addresses. A flood of anonymous callers can
 * only evict anonymous callers, and each region syncs with the KV on its own,
 * so it never delays a keyed caller. A caller is looked up among PROBE slots
 * from its hash; a new caller takes an empty one, else evicts the least
 * recently used of them (one with no counts waiting for the KV if there is
 * one). Memory is therefore fixed: SLOT_BYTES per slot, allocated once.
 */

/** Int32 words per slot (72 bytes); the header of a region takes one slot's room. */
const SLOT_WORDS = 18;
export const SLOT_BYTES = SLOT_WORDS * 4;
/** How many slots a caller may sit in, from its hash on. */
const PROBE = 8;

// A slot's words.
const LOCK = 0;
const HASH_LO = 1;
const HASH_HI = 2;
const WINDOW = 3;
const LIMIT = 4;
const FLAGS = 5;
/** Two fixed windows, by the parity of their index: index, count read from the KV, count not yet written. */
const INDEX = 6; // 6, 7
const SHARED = 8; // 8, 9
const PENDING = 10; // 10, 11
const SINCE_SYNC = 12;
const ALLOWANCE = 13;
/** Times in tenths of a second since the table's epoch (room for 6 years in an Int32). */
const LAST_USED = 14;
const SYNCED_AT = 15;
/**
 * When the newest counted unit was spent (tenths since the epoch, plus one; 0: none), so
 * that no unit counts for longer than one window after it was spent. Word 17 is spare
 * (a slot keeps an even number of words: the region headers are read as Float64).
 */
const LAST_SPENT = 16;

export const OCCUPIED = 1;
/** Its counts were read from the KV at least once. */
export const SYNCED = 2;
/** A request waits for its counts: the next sync must read them. */
export const WANTED = 4;
/** A local tally (flood detection) that never goes to the KV. */
export const LOCAL = 8;

// A region header's words (the Float64 ones at even word offsets).
const SYNC_LOCK = 0;
const GENERATION = 1;
const FAILED = 2;
const INSERT_LOCK = 3;
const EVICTIONS = 4;
const F64_LAST_SUCCESS = 3; // words 6-7
const F64_LAST_ATTEMPT = 4; // words 8-9
const F64_LOCKED_AT = 5; // words 10-11
const F64_EPOCH = 6; // words 12-13

export type RegionName = "key" | "anonymous";

/** Slots per region unless told otherwise: 8 K keys (0.6 MB), 128 K anonymous callers (9 MB). */
export const DEFAULT_CAPACITY: Readonly<Record<RegionName, number>> = {
  key: 8192,
  anonymous: 131_072,
};

/**
 * A spin on a lock longer than this means its holder died (a worker terminated
 * while holding it, at shutdown): take it. A live holder keeps it for microseconds.
 */
const STALE_LOCK_MS = 2000;

/** Takes the spin lock at `i32[at]` (0: free, 1: held). */
function spinLock(i32: Int32Array, at: number): void {
  if (Atomics.compareExchange(i32, at, 0, 1) === 0) return;
  const start = Date.now();
  while (Atomics.compareExchange(i32, at, 0, 1) !== 0) {
    if (Date.now() - start > STALE_LOCK_MS) return; // its holder is gone
  }
}

/** One region: its header and its slots. */
export class RateRegion {
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly capacity: number;

  constructor(buffer: SharedArrayBuffer, byteOffset: number, capacity: number) {
    this.capacity = capacity;
    const words = (capacity + 1) * SLOT_WORDS;
    this.i32 = new Int32Array(buffer, byteOffset, words);
    this.f64 = new Float64Array(buffer, byteOffset, words / 2);
  }

  /** Milliseconds of the table's epoch (its tenth-of-a-second times count from it). */
  get epoch(): number {
    return this.f64[F64_EPOCH]!;
  }

  /** Tenths of a second since the epoch. */
  tick(nowMs: number): number {
    return Math.floor((nowMs - this.epoch) / 100) | 0;
  }

  /**
   * The slot of a caller, locked (release with {@link unlock}); -1 when it
   * has none and `create` is false. A new slot starts with `flags` and empty counts.
   */
  acquire(lo: number, hi: number, window: number, create: boolean, flags = 0): number {
    for (;;) {
      let slot = this.find(lo, hi, window);
      if (slot < 0) {
        if (!create) return -1;
        slot = this.insert(lo, hi, window, flags);
        if (slot >= 0) return slot; // locked by insert
        continue;
      }
      this.lock(slot);
      if (this.matches(slot, lo, hi, window)) return slot;
      this.unlock(slot); // taken by another caller meanwhile: look again
    }
  }

  lock(slot: number): void {
    spinLock(this.i32, slot + LOCK);
  }

  unlock(slot: number): void {
    Atomics.store(this.i32, slot + LOCK, 0);
  }

  /**
   * The offsets of the slots in use, for the sync's scan: a plain pass over
   * the flags, read without the locks (the scan checks each again under its
   * lock), so an empty table of 128 K slots costs a fraction of a millisecond.
   */
  *occupiedSlots(): Generator<number> {
    const i32 = this.i32;
    for (let slot = SLOT_WORDS; slot < i32.length; slot += SLOT_WORDS) {
      if ((i32[slot + FLAGS]! & OCCUPIED) !== 0) yield slot;
    }
  }

  get(slot: number, field: number): number {
    return this.i32[slot + field]!;
  }

  set(slot: number, field: number, value: number): void {
    this.i32[slot + field] = value;
  }

  /** Frees a slot (held locked): an idle caller with nothing left to write. */
  free(slot: number): void {
    this.i32.fill(0, slot + HASH_LO, slot + SLOT_WORDS);
  }

  /** Callers evicted to make room since the table was made. */
  get evictions(): number {
    return Atomics.load(this.i32, EVICTIONS);
  }

  // The region's sync state (shared by every isolate of the server).

  /** Takes the right to sync this region; false when another isolate holds it (and is alive). */
  tryLockSync(nowMs: number, staleMs: number): boolean {
    if (Atomics.compareExchange(this.i32, SYNC_LOCK, 0, 1) !== 0) {
      if (nowMs - this.f64[F64_LOCKED_AT]! < staleMs) return false;
      // Its holder stopped without releasing it: take it over.
    }
    this.f64[F64_LOCKED_AT] = nowMs;
    this.f64[F64_LAST_ATTEMPT] = nowMs;
    return true;
  }

  /** Ends a sync: records how it went (`wrote`: it reached the KV), wakes whoever waits for it. */
  unlockSync(ok: boolean, wrote: boolean, nowMs: number): void {
    if (ok && wrote) this.f64[F64_LAST_SUCCESS] = nowMs;
    Atomics.store(this.i32, FAILED, ok ? 0 : 1);
    Atomics.store(this.i32, SYNC_LOCK, 0);
    Atomics.add(this.i32, GENERATION, 1);
    Atomics.notify(this.i32, GENERATION);
  }

  /** Whether a sync is under way, and since when (ms). */
  syncingSince(): number | null {
    return Atomics.load(this.i32, SYNC_LOCK) === 1 ? this.f64[F64_LOCKED_AT]! : null;
  }

  get generation(): number {
    return Atomics.load(this.i32, GENERATION);
  }

  /** Resolves when a sync ends after `generation` was read, or after `timeoutMs`. */
  async waitSync(generation: number, timeoutMs: number): Promise<void> {
    const wait = Atomics.waitAsync(this.i32, GENERATION, generation, Math.max(0, timeoutMs));
    if (!wait.async) return;
    // A timer beside it: a pending waitAsync alone does not keep Deno's event loop alive.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise((resolve) => timer = setTimeout(resolve, Math.max(0, timeoutMs)));
    await Promise.race([wait.value, late]);
    clearTimeout(timer);
  }

  get lastFailed(): boolean {
    return Atomics.load(this.i32, FAILED) === 1;
  }

  get lastSuccess(): number {
    return this.f64[F64_LAST_SUCCESS]!;
  }

  get lastAttempt(): number {
    return this.f64[F64_LAST_ATTEMPT]!;
  }

  private find(lo: number, hi: number, window: number): number {
    const i32 = this.i32;
    let index = (lo >>> 0) % this.capacity;
    for (let n = 0; n < PROBE; n++) {
      const slot = (index + 1) * SLOT_WORDS;
      if (
        i32[slot + HASH_LO] === lo && i32[slot + HASH_HI] === hi && i32[slot + WINDOW] === window
      ) {
        return slot;
      }
      if (++index === this.capacity) index = 0;
    }
    return -1;
  }

  private matches(slot: number, lo: number, hi: number, window: number): boolean {
    const i32 = this.i32;
    return i32[slot + HASH_LO] === lo && i32[slot + HASH_HI] === hi &&
      i32[slot + WINDOW] === window && (i32[slot + FLAGS]! & OCCUPIED) !== 0;
  }

  /** Places a new caller (under the region's insert lock, so one caller never gets two slots). */
  private insert(lo: number, hi: number, window: number, flags: number): number {
    const i32 = this.i32;
    spinLock(i32, INSERT_LOCK);
    try {
      if (this.find(lo, hi, window) >= 0) return -1; // another isolate placed it: look again
      let index = (lo >>> 0) % this.capacity;
      let victim = -1;
      let victimScore = Infinity;
      for (let n = 0; n < PROBE; n++) {
        const slot = (index + 1) * SLOT_WORDS;
        if ((i32[slot + FLAGS]! & OCCUPIED) === 0) {
          victim = slot;
          break;
        }
        // The least recently used, and one with nothing left to write before any other.
        const waiting = i32[slot + PENDING]! + i32[slot + PENDING + 1]! > 0 &&
          (i32[slot + FLAGS]! & LOCAL) === 0;
        const score = i32[slot + LAST_USED]! + (waiting ? 2 ** 31 : 0);
        if (score < victimScore) victim = slot, victimScore = score;
        if (++index === this.capacity) index = 0;
      }
      this.lock(victim);
      if ((i32[victim + FLAGS]! & OCCUPIED) !== 0) Atomics.add(i32, EVICTIONS, 1);
      i32.fill(0, victim + HASH_LO, victim + SLOT_WORDS);
      i32[victim + HASH_LO] = lo;
      i32[victim + HASH_HI] = hi;
      i32[victim + WINDOW] = window;
      i32[victim + FLAGS] = OCCUPIED | flags;
      return victim;
    } finally {
      Atomics.store(i32, INSERT_LOCK, 0);
    }
  }
}

export const FIELDS = {
  LIMIT,
  FLAGS,
  INDEX,
  SHARED,
  PENDING,
  SINCE_SYNC,
  ALLOWANCE,
  LAST_USED,
  SYNCED_AT,
  LAST_SPENT,
  HASH_LO,
  HASH_HI,
  WINDOW,
} as const;

/** The shared memory of one server's rate counts: a key region and an anonymous one. */
export class RateTable {
  readonly buffer: SharedArrayBuffer;
  readonly regions: Readonly<Record<RegionName, RateRegion>>;

  /**
   * Maps `buffer` (made by {@link rateTableBuffer}) or makes a new one. Every
   * isolate of a server maps the same buffer.
   */
  constructor(buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? rateTableBuffer();
    const header = new Int32Array(this.buffer, 0, 4);
    const capacity = { key: header[0]!, anonymous: header[1]! };
    const keyBytes = (capacity.key + 1) * SLOT_BYTES;
    this.regions = Object.freeze({
      key: new RateRegion(this.buffer, SLOT_BYTES, capacity.key),
      anonymous: new RateRegion(this.buffer, SLOT_BYTES + keyBytes, capacity.anonymous),
    });
  }

  /** Bytes of shared memory the table holds (all of it, used or not). */
  get bytes(): number {
    return this.buffer.byteLength;
  }
}

/**
 * A new table's memory: a header slot (the capacities), then each region.
 * The pages of a SharedArrayBuffer are only backed by memory once written, so
 * an unused table costs little.
 */
export function rateTableBuffer(
  capacity: Readonly<Record<RegionName, number>> = DEFAULT_CAPACITY,
  epoch = Date.now(),
): SharedArrayBuffer {
  for (const [name, slots] of Object.entries(capacity)) {
    if (!Number.isInteger(slots) || slots < PROBE || slots > 2 ** 24) {
      throw new RangeError(`Rate table: ${name} capacity ${slots} is not from ${PROBE} to 2^24`);
    }
  }
  const bytes = SLOT_BYTES * (3 + capacity.key + capacity.anonymous);
  const buffer = new SharedArrayBuffer(bytes);
  const header = new Int32Array(buffer, 0, 4);
  header[0] = capacity.key;
  header[1] = capacity.anonymous;
  const table = new RateTable(buffer);
  for (const region of Object.values(table.regions)) region.f64[F64_EPOCH] = epoch;
  return buffer;
}
