/**
 * Rendered answers of repeat lookups (`GET /ip/{ip}`, `/me`): the same
 * visitors, attackers and top talkers come back, and their answer is the same
 * text until something it depends on changes. Keyed by everything the body
 * depends on (the address, format, `get`, `lang`, `at`, the user agent where
 * the answer shows it); held per data set (a reload drops it) and, where the
 * answer shows the time zone's `current_time`, per second. Bounded in entries
 * (IPINTEL_ANSWER_CACHE; 0 turns it off) and in bytes, counted at what the entries
 * cost in memory: keys at 2 bytes a character, the body at 1 or 2 (V8 keeps Latin-1 text
 * in one byte a character, other text in two), and each entry's objects and slots. A key
 * longer than MAX_KEY_LENGTH (a hostile user agent or `get` list) is not cached at all:
 * 6,000 distinct 30 KB user agents had filled the cache with their keys, 188 MB resident
 * over two workers. Only bodies: headers (RateLimit, CORS, X-Data-Version), keys and limits
 * stay per request, and a request is charged before its answer is looked up here.
 */

import { LruCache, textHash } from "../../base/cache/lru.ts";
import { ownCopy } from "../../base/cache/own_copy.ts";
import type { Served } from "../http/env.ts";

/** Bytes the cached entries may take at most (see {@link entryBytes}), per cache (isolate). */
export const ANSWER_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Longest key cached, in characters. A real request's key is its parameters, the address and
 * a user agent of a few hundred characters; beyond this, the request is served uncached (its
 * key is neither hashed nor kept).
 */
export const MAX_KEY_LENGTH = 2048;

/**
 * What an entry costs beside its two strings' characters: the two strings' headers and the
 * key's flattened form (about 60), the Entry object (24), the LRU's Map entry, slot arrays and
 * links (about 40), rounded up.
 */
export const ENTRY_OVERHEAD_BYTES = 160;

/** Latin-1 text, which V8 keeps in one byte a character (the regexp fails fast on it). */
const NOT_LATIN1 = /[\u0100-\uffff]/;

/** The bytes an entry of `key` and `body` takes in memory, as the cache counts it. */
export function entryBytes(key: string, body: string): number {
  return 2 * key.length + (NOT_LATIN1.test(body) ? 2 : 1) * body.length + ENTRY_OVERHEAD_BYTES;
}

/** Where the cache reports its hits, misses and size (the server's metrics). */
export interface AnswerCacheSink {
  hit(): void;
  miss(): void;
  bytes(total: number): void;
}

interface Entry {
  /** The whole key: entries are found by its hash, and a hit must be this key. */
  key: string;
  body: string;
  /** What it is counted at ({@link entryBytes}). */
  bytes: number;
  /** The second it was made in, where the body shows the current time; else -1. */
  second: number;
}

export class AnswerCache {
  /**
   * By the key's 32-bit hash: a number is found without hashing the key's text again (a
   * miss, the usual case of a new address, costs one pass over the key), and a number
   * kept among the refused keys is no object for the garbage collector to copy.
   */
  readonly #entries: LruCache<number, Entry>;
  readonly #maxBytes: number;
  readonly #sink: AnswerCacheSink | null;
  #served: Served | null = null;
  #bytes = 0;

  constructor(
    options: { entries: number; maxBytes?: number; sink?: AnswerCacheSink | null },
  ) {
    this.#maxBytes = options.maxBytes ?? ANSWER_CACHE_MAX_BYTES;
    this.#sink = options.sink ?? null;
    // Once full, an answer is kept only the second time it is made: addresses met once (a
    // scan, a unique mix) pass through without pushing out the repeat visitors' answers.
    this.#entries = new LruCache(options.entries, {
      admitRepeatsOnly: true,
      onEvict: (_, entry) => this.#account(-entry.bytes),
    });
  }

  /** Whether answers are cached at all (IPINTEL_ANSWER_CACHE above 0). */
  get enabled(): boolean {
    return this.#entries.max > 0;
  }

  /**
   * The body cached for `key` under `served`, or undefined. `second` is the
   * current second where the answer shows the time (null: it does not).
   */
  get(served: Served, key: string, second: number | null): string | undefined {
    if (served !== this.#served) this.#reset(served);
    if (key.length > MAX_KEY_LENGTH) return undefined; // never cached: not a miss either
    const entry = this.#entries.get(textHash(key));
    if (entry !== undefined && entry.key === key && entry.second === (second ?? -1)) {
      this.#sink?.hit();
      return entry.body;
    }
    this.#sink?.miss();
    return undefined;
  }

  /** Keeps `body` for `key` (made under `served`, in `second` where it shows the time). */
  set(served: Served, key: string, body: string, second: number | null): void {
    if (served !== this.#served) this.#reset(served);
    if (key.length > MAX_KEY_LENGTH) return;
    const bytes = entryBytes(key, body);
    if (bytes > this.#maxBytes / 64) return; // a huge answer would push out many small ones
    const hash = textHash(key);
    // Another key of the same hash (rare) is replaced: the newer answer is kept.
    const old = this.#entries.get(hash);
    if (old !== undefined) this.#account(-old.bytes);
    // Made only when kept (LruCache.offer): a refused answer's body stays young garbage. The
    // key is kept as a copy of its own: built from request text, it could be a slice or a
    // rope of a longer string (a URL, a header) and keep all of that alive.
    this.#entries.offer(hash, () => ({ key: ownCopy(key), body, bytes, second: second ?? -1 }));
    if (this.#entries.has(hash)) this.#account(bytes);
    while (this.#bytes > this.#maxBytes && this.#entries.size > 0) this.#entries.evictOldest();
  }

  /** The bytes the entries are counted at (what `/metrics` reports). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  #reset(served: Served): void {
    this.#served = served;
    this.#entries.clear();
    this.#account(-this.#bytes);
  }

  #account(delta: number): void {
    this.#bytes += delta;
    this.#sink?.bytes(this.#bytes);
  }
}
