/**
 * Opens MaxMind DB bytes behind our own interface: the lookup path walks the
 * tree (tree.ts) and decodes records (decoder.ts) itself; mmdb-lib, through its
 * public API only, reads the metadata and answers the text-address methods.
 * The only module that knows mmdb-lib.
 */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { LruCache } from "../../base/cache/lru.ts";
import { SlotTable } from "../../base/cache/slot_table.ts";
import { DEFAULT_RECORD_CACHE_SIZE } from "../../base/config.ts";
import { createDataDecoder } from "./decoder.ts";
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
  /** The whole file, for walks over every network (src/core/asn/tree_networks.ts); read-only. */
  readonly bytes: Uint8Array;
  /** mmdb-lib's own walk on address text, exactly as the file says (load checks, tests). */
  get(ip: string): T | null;
  /**
   * The record for network-order address bytes (4 or 16), without parsing text: the
   * lookup path. 6to4 and Teredo addresses read the IPv4 address they embed (see tree.ts).
   */
  getBytes(address: Uint8Array): T | null;
  /**
   * `getBytes` in two steps: where the record for the address sits (its data-section
   * offset, -1 when the tree has no data for the address), then the record at an offset
   * so found. Callers that keep what they derive from a record key it by this offset.
   */
  recordOffset(address: Uint8Array): number;
  recordAt(offset: number): T;
  /**
   * The prefix length of the network `getBytes` finds the address in (in the
   * address's own bits; 6to4 and Teredo count their IPv4 part after 16 / 32 bits).
   */
  prefixLength(address: Uint8Array): number;
  /** mmdb-lib's own walk, with the prefix length of the network found. */
  getWithPrefixLength(ip: string): [T | null, number];
  /**
   * Hits and misses of the decoded-record cache so far (for metrics): a lookup that
   * reaches data counts once for its record and, when decoded, once per value it
   * shares with other records through a pointer (map keys aside: the decoder keeps those).
   */
  cacheCounts(): { hits: number; misses: number };
  /**
   * Runs `scan` (synchronous) with this database's record cache read but not
   * filled: the records it decodes die with their answers. A streamed bulk
   * answer runs each batch so (src/service/bulk/batches.ts, through its lookup's and
   * data set's `withoutCacheFills`), as a database reads a large table through a small ring
   * of buffers: a job of a million addresses met once neither evicts the working
   * set of the server's other requests nor leaves a million records as
   * old-generation garbage (the server's memory rose over such a stream when it
   * filled them). Records decoded meanwhile go to a small table of their own
   * (RECENT_BITS); the values records share have their own cache, which is
   * still filled. Calls nest; other databases are not affected.
   */
  withoutCacheFills<T>(scan: () => T): T;
}

/**
 * Opens a database held in memory. Decoded records are cached by their data
 * offset (bounded LRU), so a warm lookup skips decoding entirely; the values
 * records share through pointers are entries of the same cache, decoded once
 * and shared while cached.
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
  // Records by data offset, IPINTEL_CACHE_SIZE of them. Once full, a record is kept only
  // when met again: addresses met once leave the working set in place (src/base/cache/lru.ts).
  const cache = new LruCache<number, unknown>(options.cacheSize ?? DEFAULT_RECORD_CACHE_SIZE, {
    admitRepeatsOnly: true,
  });
  // mmdb-lib serves only the text-address methods (load checks, tests, the rare
  // network of an Anonymous-IP match): a small cache of its own is enough there.
  // deno-lint-ignore no-explicit-any
  const reader = new Reader<any>(buffer, { cache: new LruCache(MMDB_LIB_CACHE_SIZE) });
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
  const dataStart = metadata.nodeCount * metadata.recordSize / 4 + 16;
  const dataEnd = metadataStart(bytes);
  if (dataStart > dataEnd) {
    throw new Error(`a search tree of ${metadata.nodeCount} nodes does not fit the file`);
  }
  // The values records share (a country, a subdivision) have a cache of their own, a
  // quarter of the records' size: decoding a missed record reaches several, and in the
  // records' cache they pushed out records of the working set.
  const shared = new LruCache<number, unknown>(cache.max && Math.max(1024, cache.max >> 2), {
    admitRepeatsOnly: true,
  });
  const decode = createDataDecoder(bytes, dataStart, dataEnd, { shared });
  const dataOffset = metadata.nodeCount + 16;
  const decodeRecord = (offset: number): T => {
    try {
      return decode(offset) as T;
    } catch (error) {
      throw new CorruptRecordError(label, offset, error);
    }
  };
  // Scans running with the caches read but not filled (withoutCacheFills): while above 0,
  // decoded records go to the table of the records decoded lately, one per slot (offset + 1).
  let notFilling = 0;
  const recent = new SlotTable<T>(RECENT_BITS);
  const recordOffset = (address: Uint8Array): number => {
    const pointer = walk(address);
    return pointer === 0 ? -1 : pointer - dataOffset;
  };
  const recordAt = (offset: number): T => {
    let record = cache.get(offset) as T | undefined;
    if (record === undefined) {
      if (notFilling > 0) {
        record = recent.get(offset);
        if (record !== undefined) return record;
        record = decodeRecord(offset);
        recent.set(offset, record);
        return record;
      }
      record = decodeRecord(offset);
      cache.set(offset, record);
    }
    return record;
  };
  return {
    metadata,
    bytes,
    get: (ip) => reader.get(ip) as T | null,
    getBytes: (address) => {
      const offset = recordOffset(address);
      return offset === -1 ? null : recordAt(offset);
    },
    recordOffset,
    recordAt,
    prefixLength: createPrefixLength(bytes, metadata),
    getWithPrefixLength: (ip) => reader.getWithPrefixLength(ip) as [T | null, number],
    cacheCounts: () => ({ hits: cache.hits + shared.hits, misses: cache.misses + shared.misses }),
    withoutCacheFills: (scan) => {
      notFilling++;
      try {
        return scan();
      } finally {
        notFilling--;
      }
    },
  };
}

/**
 * The table of records decoded lately while the caches are not filled, 2^12 slots
 * (one record per slot, by data offset): a stream's hot records (a country's
 * block, a large network) are decoded once per while, and a record leaves its
 * slot within about 4,096 lookups, young enough for V8 to collect it cheaply (a
 * much larger table keeps records long enough to reach the old generation, and
 * the server's memory rises again).
 */
const RECENT_BITS = 12;

/** Entries of the cache mmdb-lib's own reader keeps (records and the values they share). */
const MMDB_LIB_CACHE_SIZE = 1024;

const METADATA_MARKER = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];

/**
 * Where the data section ends: the metadata marker (its last occurrence in the
 * file's final 128 KiB, as the format says).
 */
function metadataStart(bytes: Uint8Array): number {
  const stop = Math.max(0, bytes.length - 128 * 1024);
  outer: for (let i = bytes.length - METADATA_MARKER.length; i >= stop; i--) {
    for (let j = 0; j < METADATA_MARKER.length; j++) {
      if (bytes[i + j] !== METADATA_MARKER[j]) continue outer;
    }
    return i;
  }
  throw new Error("no metadata marker");
}
