/**
 * The bodies of single-address lookups, kept whole: a repeated request (the
 * same address, format, `get`, `lang` and user agent, from the same data set)
 * is answered without the lookup and the serializer.
 *
 * What it never changes: the cache sits after admission (every request is
 * still identified and charged), keeps only successes (a lookup that throws
 * stores nothing), and a kept answer is exactly what a new lookup would give:
 *
 * - the data set: the cache belongs to one `services.current` (a reload
 *   installs a new one, and the cache starts empty);
 * - the time: the time-zone part (`current_time`, `offset`, `is_dst`) is
 *   checked on every hit with `lookup.renew`, which answers the same result
 *   while its time-zone part holds (the same UTC second) and a copy with the
 *   current one otherwise, which is then rendered and kept;
 * - everything else that shapes the bytes is the key.
 *
 * Bounded: {@link ANSWER_CACHE_SIZE} answers (least recently used go first);
 * a key over {@link MAX_KEY_LENGTH} characters (a long user agent) or a body
 * over {@link MAX_BODY_LENGTH} is answered without being kept, so the cache
 * holds at most about 60 MB (two-byte keys), typically about 15 MB.
 */

import { LruCache } from "../cache/lru.ts";
import { renderLookup } from "../format/mod.ts";
import type { Lookup } from "../lookup/lookup.ts";
import type { LookupResult } from "../types.ts";
import type { LookupRequest } from "./lookup_request.ts";

/** Answers kept per data set. */
export const ANSWER_CACHE_SIZE = 10_000;
/** Longest key kept (the user agent is most of it; a browser's is about 150 characters). */
export const MAX_KEY_LENGTH = 1024;
/** Longest body kept (a full JSON answer is about 1,100 bytes; `risk` adds some). */
export const MAX_BODY_LENGTH = 4096;

interface Kept {
  result: LookupResult;
  body: string;
}

export interface AnswerCache {
  /**
   * The body for `ip` with `p` (and the `get` text as sent) from `served`: a
   * kept one when still current, else looked up (throwing as the lookup does)
   * and rendered.
   */
  body(served: { lookup: Lookup }, ip: string, p: LookupRequest, get: string | undefined): string;
}

export function createAnswerCache(size = ANSWER_CACHE_SIZE): AnswerCache {
  const kept = new LruCache<string, Kept>(size);
  let owner: object | null = null;
  return {
    body(served, ip, p, get) {
      if (served !== owner) {
        kept.clear();
        owner = served;
      }
      const key = `${part(ip)}${p.format}${part(get)}${part(p.lang)}${part(p.userAgent)}`;
      const found = kept.get(key);
      if (found !== undefined) {
        const result = served.lookup.renew(found.result);
        if (result === found.result) return found.body;
        const body = renderLookup(result, p.selection, p.format);
        kept.set(key, { result, body });
        return body;
      }
      const result = served.lookup(ip, p);
      const body = renderLookup(result, p.selection, p.format);
      if (key.length <= MAX_KEY_LENGTH && body.length <= MAX_BODY_LENGTH) {
        kept.set(key, { result, body });
      }
      return body;
    },
  };
}

/** One part of a key, unambiguous: its length and text, or a mark for none. */
function part(text: string | null | undefined): string {
  return text == null ? "\u0000" : `${text.length}:${text}`;
}
