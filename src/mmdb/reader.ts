/** The only module that knows mmdb-lib: opens MaxMind DB bytes behind our own interface. */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { LruCache } from "../cache/lru.ts";
import { DEFAULT_RECORD_CACHE_SIZE } from "../config.ts";
import { createPrefixLength, createTreeWalk } from "./tree.ts";

/** A record of a database that does not decode: a server fault, never the caller's. */
export class CorruptRecordError extends Error {
  constructor(label: string, offset: number, cause: unknown) {
    super(
      `Corrupt record in ${label} at data offset ${offset}: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
    this.name = "CorruptRecordError";
  }
}

/** What we use of a database's metadata section. */
export interface MmdbMetadata {
  databaseType: string;
  buildEpoch: Date;
  languages: string[];
  description: Record<string, string>;
  ipVersion: number;
  nodeCount: number;
  recordSize: number;
}

/** A read-only database. Returned records are shared: callers must not mutate them. */
export interface MmdbDatabase<T> {
  readonly metadata: MmdbMetadata;
  /** The whole file, for walks over every network (src/asn/tree_networks.ts); read-only. */
  readonly bytes: Uint8Array;
  /** mmdb-lib's own walk on address text, exactly as the file says (load checks, tests). */
  get(ip: string): T | null;
  /**
   * The record for network-order address bytes (4 or 16), without parsing text: the
   * lookup path. 6to4 and Teredo addresses read the IPv4 address they embed (see tree.ts).
   */
  getBytes(address: Uint8Array): T | null;
  /**
   * The prefix length of the network `getBytes` finds the address in (in the
   * address's own bits; 6to4 and Teredo count their IPv4 part after 16 / 32 bits).
   */
  prefixLength(address: Uint8Array): number;
  /** mmdb-lib's own walk, with the prefix length of the network found. */
  getWithPrefixLength(ip: string): [T | null, number];
  /** Hits and misses of the decoded-record cache so far (for metrics). */
  cacheCounts(): { hits: number; misses: number };
}

/**
 * Opens a database held in memory. Decoded records are cached by their data
 * offset (bounded LRU), so a warm lookup skips decoding entirely.
 * Throws when the bytes are not a valid MaxMind DB. A record that does not
 * decode (a corrupt pointer inside it) throws `CorruptRecordError` naming
 * `label` and the data offset, at each lookup that reaches it.
 */
export function openMmdb<T>(
  bytes: Uint8Array,
  options: { cacheSize?: number; label?: string } = {},
): MmdbDatabase<T> {
  const label = options.label ?? "MaxMind DB";
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cache = new LruCache<number, unknown>(options.cacheSize ?? DEFAULT_RECORD_CACHE_SIZE);
  // mmdb-lib caches a {value, offset} pair per data offset and reads only its value
  // (3.0.3): keeping the value alone saves an object per entry; a hit makes a fresh
  // pair, which dies young.
  const values = {
    get: (offset: string | number) => {
      const value = cache.get(offset as number);
      return value === undefined ? undefined : { value, offset: 0 };
    },
    set: (offset: string | number, decoded: { value: unknown }) =>
      cache.set(offset as number, decoded.value),
  };
  // deno-lint-ignore no-explicit-any
  const reader = new Reader<any>(buffer, { cache: values });
  const m = reader.metadata;
  const metadata: MmdbMetadata = Object.freeze({
    databaseType: m.databaseType,
    buildEpoch: m.buildEpoch,
    languages: m.languages ?? [],
    // mmdb-lib types `description` as a string; the format stores a language → text map.
    description: (m.description ?? {}) as unknown as Record<string, string>,
    ipVersion: m.ipVersion,
    nodeCount: m.nodeCount,
    recordSize: m.recordSize,
  });
  const walk = createTreeWalk(bytes, metadata);
  const resolve = dataResolver<T>(reader);
  return {
    metadata,
    bytes,
    get: (ip) => reader.get(ip) as T | null,
    getBytes: (address) => {
      const pointer = walk(address);
      if (pointer === 0) return null;
      try {
        return resolve(pointer);
      } catch (error) {
        throw new CorruptRecordError(label, pointer - metadata.nodeCount - 16, error);
      }
    },
    prefixLength: createPrefixLength(bytes, metadata),
    getWithPrefixLength: (ip) => reader.getWithPrefixLength(ip) as [T | null, number],
    cacheCounts: () => ({ hits: cache.hits, misses: cache.misses }),
  };
}

/**
 * mmdb-lib's decoding of the record a data pointer names (with the offset
 * cache), used as is. Its Reader has that step, `resolveDataPointer`, but
 * declares it private, and no public method takes a pointer: so it is checked
 * here, at open, and a version of mmdb-lib without it (deno.json pins 3.0.3)
 * fails at start with this message instead of at the first lookup.
 * tests/mmdb/reader_test.ts holds getBytes() to mmdb-lib's public get().
 */
function dataResolver<T>(reader: object): (pointer: number) => T {
  const method = (reader as { resolveDataPointer?: unknown }).resolveDataPointer;
  if (typeof method !== "function" || method.length !== 1) {
    throw new Error(
      "This mmdb-lib has no Reader.resolveDataPointer(pointer): ipintel needs mmdb-lib 3.0 (see deno.json)",
    );
  }
  return (pointer) => method.call(reader, pointer) as T;
}
