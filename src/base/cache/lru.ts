/**
 * A small bounded least-recently-used cache.
 *
 * A `Map` from key to a slot; the slots' recency order is a doubly linked list
 * kept in two Int32Arrays, keys and values in two arrays. A hit relinks the
 * slot by writing integers only: no object per entry (a node object would add
 * a sizeable share to each cached record's memory) and no pointer writes into
 * old objects (each passes the garbage collector's write barrier, which would
 * make relinking the costliest step of a warm lookup). Deleting and
 * re-inserting the key in the Map on each hit, the usual Map-order trick,
 * leaves a deleted marker in the hash table every time, and a key hit
 * repeatedly then slows down every hit. Every operation is O(1). From 1024
 * entries on, the order is nearly LRU: an entry hit again soon after it was
 * moved to the front keeps its place (see get), which can only evict it later
 * than exact LRU's order would after that hit, never sooner than 3/4 of the
 * cache's size in insertions.
 *
 * @module
 */

/** Caches at least this large settle hot entries (see get): small ones stay exact. */
const SETTLE_FROM = 1024;

/** Slot 0 is the list's sentinel: `next[0]` is the most recent slot, `prev[0]` the least. */
const HEAD = 0;

/** Bounded LRU cache. `max` 0 disables caching (every `set` is dropped). */
export class LruCache<K, V> {
  readonly #slots = new Map<K, number>();
  readonly #max: number;
  #keys: (K | undefined)[] = [undefined];
  #values: (V | undefined)[] = [undefined];
  // Grown by doubling up to max + 1 slots: a large max costs nothing until it fills.
  #prev = new Int32Array(16);
  #next = new Int32Array(16);
  /** Slots freed by `delete`, reused before new ones. */
  #free: number[] = [];
  #hits = 0;
  #misses = 0;
  /** Entries inserted so far, and when each slot was last moved to the front (in insertions). */
  #insertions = 0;
  #movedAt = new Int32Array(16);
  /** A hit on a slot moved within this many insertions keeps its place (see get). */
  readonly #settle: number;

  /**
   * Keys refused once while full (see set), as 32-bit hashes in a direct-mapped table (0:
   * empty); null: every key is admitted. Hashes, not the keys: a Set of string keys, each
   * young when added and kept until the next clear, was copied by every scavenge and then
   * promoted, and it cost a cached answer's miss more than the rest of the cache's work.
   */
  readonly #refused: Int32Array | null;
  /** The table's size as a shift: a hash's top bits choose its slot. */
  readonly #refusedShift: number;
  /** Keys refused since the table was last emptied (at `max`, it is emptied). */
  #refusedCount = 0;
  /** Told of each entry pushed out to make room (not of deletes or clears). */
  readonly #onEvict: ((key: K, value: V) => void) | null;

  /**
   * @param max most entries kept; a non-negative integer.
   * @param options.admitRepeatsOnly once full, store a new key only the second time it is
   *   set (see set).
   * @param options.onEvict told of each entry pushed out to make room (a size kept beside).
   */
  constructor(
    max: number,
    options: { admitRepeatsOnly?: boolean; onEvict?: (key: K, value: V) => void } = {},
  ) {
    this.#onEvict = options.onEvict ?? null;
    if (!Number.isInteger(max) || max < 0) {
      throw new RangeError(`LruCache size must be a non-negative integer, got ${max}`);
    }
    // At least four slots a remembered key (few collisions), a power of two.
    const bits = Math.max(6, Math.ceil(Math.log2(Math.max(1, max) * 4)));
    this.#refused = options.admitRepeatsOnly ? new Int32Array(2 ** bits) : null;
    this.#refusedShift = 32 - bits;
    this.#max = max;
    this.#settle = max >= SETTLE_FROM ? max >> 2 : 0;
  }

  /** Most entries kept. */
  get max(): number {
    return this.#max;
  }

  /** Entries currently held. */
  get size(): number {
    return this.#slots.size;
  }

  /** Calls of `get` that found their key, since the cache was made (for metrics). */
  get hits(): number {
    return this.#hits;
  }

  /** Calls of `get` that did not find their key, since the cache was made. */
  get misses(): number {
    return this.#misses;
  }

  /** The value for `key`, marking it most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const slot = this.#slots.get(key);
    if (slot === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    // A large cache skips the relinking for an entry moved to the front within the last
    // quarter of its size in insertions: it is still three quarters of the cache away
    // from eviction. Relinking writes four links scattered over the arrays; a hot entry
    // of a large cache is hit far more often than once a quarter-cache.
    if (this.#insertions - this.#movedAt[slot]! >= this.#settle) this.#moveToFront(slot);
    return this.#values[slot];
  }

  /** True when `key` is held; does not change its recency. */
  has(key: K): boolean {
    return this.#slots.has(key);
  }

  /**
   * Stores `value` as the most recently used entry, evicting the oldest when full.
   * With `admitRepeatsOnly`, a full cache stores a key only when it was refused once
   * before (the keys refused are remembered up to `max`, then forgotten all at once, and
   * one may be forgotten sooner when another takes its place in the table: see #refuse):
   * keys each met once (a scanner sweeping through addresses) then pass through without
   * evicting the working set, and their values die young instead of living in the cache
   * long enough to become old-generation garbage once evicted.
   */
  set(key: K, value: V): void {
    const slot = this.#slotFor(key);
    if (slot !== -1) this.#values[slot] = value;
  }

  /**
   * `set` with the value made only when `key` is stored. A value made and then refused
   * is garbage at once, but V8 makes such an object, at a site whose objects were kept
   * (the cache's first ones), directly in the old generation: one that points at a young
   * body keeps it alive through scavenges, and a refused answer's body was promoted and
   * collected with the old generation's costlier collections.
   */
  offer(key: K, make: () => V): void {
    const slot = this.#slotFor(key);
    if (slot !== -1) this.#values[slot] = make();
  }

  /** The slot holding `key` from now on, at the front (-1: refused; see set). */
  #slotFor(key: K): number {
    if (this.#max === 0) return -1;
    let slot = this.#slots.get(key);
    if (slot !== undefined) {
      this.#moveToFront(slot);
      return slot;
    }
    if (this.#slots.size >= this.#max) {
      if (this.#refused !== null && this.#refuse(key)) return -1;
      this.evictOldest();
    }
    slot = this.#free.pop() ?? this.#newSlot();
    this.#keys[slot] = key;
    this.#insertions++;
    this.#link(slot);
    this.#slots.set(key, slot);
    return slot;
  }

  /** Pushes out the least recently used entry (telling `onEvict`); false when empty. */
  evictOldest(): boolean {
    const slot = this.#prev[HEAD]!;
    if (slot === HEAD) return false;
    const key = this.#keys[slot]!;
    const value = this.#values[slot]!;
    this.delete(key);
    this.#onEvict?.(key, value);
    return true;
  }

  /** Removes `key`; true when it was held. */
  delete(key: K): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    this.#unlink(slot);
    this.#keys[slot] = this.#values[slot] = undefined; // let the value be collected
    this.#free.push(slot);
    return this.#slots.delete(key);
  }

  /** Removes every entry. */
  clear(): void {
    this.#slots.clear();
    this.#refused?.fill(0);
    this.#refusedCount = 0;
    this.#keys = [undefined];
    this.#values = [undefined];
    this.#free = [];
    this.#prev[HEAD] = this.#next[HEAD] = HEAD;
  }

  /**
   * True when `key` is met for the first time lately: it is remembered and refused. A key
   * remembered is forgotten when admitted, when `max` keys were refused since the table
   * was emptied (it is emptied then), or when a key of the same slot takes it.
   */
  #refuse(key: K): boolean {
    const refused = this.#refused!;
    const hash = keyHash(key);
    const slot = hash >>> this.#refusedShift;
    if (refused[slot] === hash) {
      refused[slot] = 0;
      return false;
    }
    if (this.#refusedCount >= this.#max) {
      refused.fill(0);
      this.#refusedCount = 0;
    }
    refused[slot] = hash;
    this.#refusedCount++;
    return true;
  }

  /** A slot never used yet, growing the link arrays when they are full. */
  #newSlot(): number {
    const slot = this.#keys.length;
    if (slot === this.#next.length) {
      const size = Math.min(slot * 2, this.#max + 1);
      const grow = (old: Int32Array) => {
        const bigger = new Int32Array(size);
        bigger.set(old);
        return bigger;
      };
      this.#prev = grow(this.#prev);
      this.#next = grow(this.#next);
      this.#movedAt = grow(this.#movedAt);
    }
    this.#keys.push(undefined);
    this.#values.push(undefined);
    return slot;
  }

  #link(slot: number): void {
    this.#movedAt[slot] = this.#insertions;
    const prev = this.#prev, next = this.#next;
    const first = next[HEAD]!;
    next[slot] = first;
    prev[slot] = HEAD;
    prev[first] = slot;
    next[HEAD] = slot;
  }

  #unlink(slot: number): void {
    const prev = this.#prev, next = this.#next;
    next[prev[slot]!] = next[slot]!;
    prev[next[slot]!] = prev[slot]!;
  }

  #moveToFront(slot: number): void {
    if (this.#next[HEAD] === slot) return;
    this.#unlink(slot);
    this.#link(slot);
  }
}

/**
 * A non-zero 32-bit hash of a key: an integer key's own bits mixed (one key, one hash), a
 * string's {@link textHash}; any other key by its text.
 */
function keyHash(key: unknown): number {
  if (typeof key === "number" && Number.isInteger(key)) {
    const h = Math.imul(key | 0, 0x9e3779b1);
    return (h ^ (h >>> 15)) || 1;
  }
  return textHash(typeof key === "string" ? key : String(key));
}

/** A non-zero 32-bit hash of a text (FNV-1a, mixed): to key a cache by a number. */
export function textHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return (h ^ (h >>> 15)) || 1;
}
