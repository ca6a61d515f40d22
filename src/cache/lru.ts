/**
 * A small bounded least-recently-used cache.
 *
 * Built on `Map`, which iterates in insertion order: a hit is deleted and
 * re-inserted so the oldest key is always first, and eviction drops that key.
 * Every operation is O(1).
 *
 * @module
 */

/** Bounded LRU cache. `max` 0 disables caching (every `set` is dropped). */
export class LruCache<K, V> {
  readonly #map = new Map<K, V>();
  readonly #max: number;

  /** @param max most entries kept; a non-negative integer. */
  constructor(max: number) {
    if (!Number.isInteger(max) || max < 0) {
      throw new RangeError(`LruCache size must be a non-negative integer, got ${max}`);
    }
    this.#max = max;
  }

  /** Most entries kept. */
  get max(): number {
    return this.#max;
  }

  /** Entries currently held. */
  get size(): number {
    return this.#map.size;
  }

  /** The value for `key`, marking it most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined && !this.#map.has(key)) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value as V);
    return value;
  }

  /** True when `key` is held; does not change its recency. */
  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Stores `value` as the most recently used entry, evicting the oldest when full. */
  set(key: K, value: V): void {
    if (this.#max === 0) return;
    if (this.#map.has(key)) this.#map.delete(key);
    else if (this.#map.size >= this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
    this.#map.set(key, value);
  }

  /** Removes `key`; true when it was held. */
  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Removes every entry. */
  clear(): void {
    this.#map.clear();
  }
}
