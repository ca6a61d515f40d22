/**
 * A small bounded least-recently-used cache.
 *
 * A `Map` from key to a node of a doubly linked list ordered by recency: a hit
 * only relinks the node. (Deleting and re-inserting the key in the Map on each
 * hit, the usual Map-order trick, leaves a deleted marker in the hash table every
 * time; a key hit repeatedly then slows down to tens of microseconds per hit.)
 * Every operation is O(1).
 *
 * @module
 */

interface Node<K, V> {
  key: K;
  value: V;
  prev: Node<K, V>;
  next: Node<K, V>;
}

/** Bounded LRU cache. `max` 0 disables caching (every `set` is dropped). */
export class LruCache<K, V> {
  readonly #map = new Map<K, Node<K, V>>();
  readonly #max: number;
  /** Sentinel of the circular list: `next` is the most recent entry, `prev` the least. */
  readonly #head: Node<K, V>;
  #hits = 0;
  #misses = 0;

  /** @param max most entries kept; a non-negative integer. */
  constructor(max: number) {
    if (!Number.isInteger(max) || max < 0) {
      throw new RangeError(`LruCache size must be a non-negative integer, got ${max}`);
    }
    this.#max = max;
    const head = {} as Node<K, V>;
    head.prev = head.next = head;
    this.#head = head;
  }

  /** Most entries kept. */
  get max(): number {
    return this.#max;
  }

  /** Entries currently held. */
  get size(): number {
    return this.#map.size;
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
    const node = this.#map.get(key);
    if (node === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    this.#moveToFront(node);
    return node.value;
  }

  /** True when `key` is held; does not change its recency. */
  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Stores `value` as the most recently used entry, evicting the oldest when full. */
  set(key: K, value: V): void {
    if (this.#max === 0) return;
    const existing = this.#map.get(key);
    if (existing !== undefined) {
      existing.value = value;
      this.#moveToFront(existing);
      return;
    }
    if (this.#map.size >= this.#max) this.delete(this.#head.prev.key);
    const head = this.#head;
    const node: Node<K, V> = { key, value, prev: head, next: head.next };
    head.next.prev = node;
    head.next = node;
    this.#map.set(key, node);
  }

  /** Removes `key`; true when it was held. */
  delete(key: K): boolean {
    const node = this.#map.get(key);
    if (node === undefined) return false;
    node.prev.next = node.next;
    node.next.prev = node.prev;
    return this.#map.delete(key);
  }

  /** Removes every entry. */
  clear(): void {
    this.#map.clear();
    this.#head.prev = this.#head.next = this.#head;
  }

  #moveToFront(node: Node<K, V>): void {
    const head = this.#head;
    if (head.next === node) return;
    node.prev.next = node.next;
    node.next.prev = node.prev;
    node.next = head.next;
    node.prev = head;
    head.next.prev = node;
    head.next = node;
  }
}
