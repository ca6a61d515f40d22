/**
 * Rendered answers of repeat lookups (`GET /ip/{ip}`, `/me`): the same
 * visitors, attackers and top talkers come back, and their answer is the same
 * text until something it depends on changes. Keyed by everything the body
 * depends on (the address, format, `get`, `lang`, `at`, the user agent where
 * the answer shows it); held per data set (a reload drops it) and, where the
 * answer shows the time zone's `current_time`, per second. Bounded in entries
 * (IPINTEL_ANSWER_CACHE; 0 turns it off) and in bytes. Only bodies: headers
 * (RateLimit, CORS, X-Data-Version), keys and limits stay per request, and a
 * request is charged before its answer is looked up here.
 */

import { LruCache, textHash } from "../../base/cache/lru.ts";
import type { Served } from "../http/env.ts";

/** Bytes (UTF-16 units; answers are ASCII) the cached bodies and keys may take at most. */
export const ANSWER_CACHE_MAX_BYTES = 64 * 1024 * 1024;

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
      onEvict: (_, entry) => this.#account(-(entry.key.length + entry.body.length)),
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
    const size = key.length + body.length;
    if (size > this.#maxBytes / 64) return; // a huge answer would push out many small ones
    const hash = textHash(key);
    // Another key of the same hash (rare) is replaced: the newer answer is kept.
    const old = this.#entries.get(hash);
    if (old !== undefined) this.#account(-(old.key.length + old.body.length));
    // Made only when kept (LruCache.offer): a refused answer's body stays young garbage.
    this.#entries.offer(hash, () => ({ key, body, second: second ?? -1 }));
    if (this.#entries.has(hash)) this.#account(size);
    while (this.#bytes > this.#maxBytes && this.#entries.size > 0) this.#entries.evictOldest();
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
