/**
 * Compiles the lists of one feed kind into the files the server opens: one
 * MaxMind DB tree (IPv4 and IPv6) of every listed network, and a JSON map of
 * the AS numbers that ASN-based lists give to the lists naming each.
 *
 * A tree's record says which lists cover the address and by which of their
 * networks (`matches`, the most specific first), so the `risk` group can name
 * every source; geofeed entries carry their place too. Overlaps are resolved
 * here: entries go in outermost first, each carrying the ones enclosing it.
 *
 * Bounded memory: the entries are typed arrays (feed_entries.ts), the
 * records are written straight into the data section (feed_data.ts), and the
 * tree is streamed out from the sorted pieces (interval_tree.ts), so a list
 * costs tens of bytes an entry beyond its parsed text and the output.
 */

import { type IntervalSource, writeIntervalTree } from "../mmdb/writer/interval_tree.ts";
import { compare, decrement, increment } from "../mmdb/writer/key_math.ts";
import type { FeedKind } from "../sources/manifest.ts";
import { FeedData, NONE } from "./feed_data.ts";
import { buildEntries, type EntryTable, lastOf, type NamedFeed } from "./feed_entries.ts";

export type { NamedFeed } from "./feed_entries.ts";

export interface CompiledFeeds {
  /** The tree, or null when no list of the kind gives networks. */
  tree: Uint8Array | null;
  /** `{"13335": ["list", ...]}` as JSON, or null when no list gives AS numbers. */
  asns: Uint8Array | null;
}

/**
 * The largest tree a kind compiles to (the server holds it in memory). The
 * largest real one, Apple's full Private Relay geofeed, takes under 100 MB;
 * a list of millions of random addresses takes more (about 110 bytes an IPv4
 * address, 700 an IPv6 one: a node per bit of each path) and is refused
 * after the count, before the tree is allocated.
 */
export const MAX_TREE_BYTES = 256_000_000;

/** The `database_type` of a compiled feed tree. */
export function feedDatabaseType(kind: FeedKind): string {
  return `ipintel-${kind}`;
}

/** Bounds of one compile (tests lower them). */
export interface CompileLimits {
  /** Default MAX_ENTRIES. */
  maxEntries?: number;
  /** Default MAX_TREE_BYTES. */
  maxTreeBytes?: number;
}

/**
 * Compiles the feeds of a kind; membership is the union of the lists. Throws,
 * naming the lists, past the limits.
 */
export function compileFeeds(
  kind: FeedKind,
  feeds: readonly NamedFeed[],
  limits: CompileLimits = {},
): CompiledFeeds {
  const withNetworks = feeds.filter(({ feed }) => feed.networks.length || feed.ranges.length);
  let tree: Uint8Array | null = null;
  if (withNetworks.length) {
    const names = withNetworks.map((f) => f.name).join(", ");
    let table: EntryTable;
    try {
      table = buildEntries(withNetworks, limits.maxEntries);
    } catch (error) {
      throw new Error(`the ${kind} lists (${names}) do not compile: ${(error as Error).message}`);
    }
    const data = new FeedData(withNetworks, table);
    try {
      tree = writeIntervalTree(nestedIntervals(table, data), () => data.chunks(), {
        databaseType: feedDatabaseType(kind),
        description: { en: `${kind} networks from ${names}` },
        maxBytes: limits.maxTreeBytes ?? MAX_TREE_BYTES,
      });
    } catch (error) {
      throw new Error(`the ${kind} lists (${names}) do not compile: ${(error as Error).message}`);
    }
  }
  const byAsn = new Map<number, string[]>();
  for (const { name, feed } of feeds) {
    for (const asn of feed.asns) {
      const names = byAsn.get(asn) ?? [];
      if (!names.includes(name)) names.push(name);
      byAsn.set(asn, names);
    }
  }
  const asns = byAsn.size
    ? new TextEncoder().encode(
      JSON.stringify(Object.fromEntries([...byAsn].sort(([a], [b]) => a - b))),
    )
    : null;
  return { tree, asns };
}

/**
 * The disjoint pieces the nested entries leave, in address order, each with
 * the record of every entry covering it, the innermost first. A sweep with a
 * stack of the entries enclosing the current address; a record is written
 * the first time a piece needs it and kept per entry, so the second pass of
 * the tree writer finds every offset already there.
 */
function nestedIntervals(table: EntryTable, data: FeedData): IntervalSource {
  const { count, first, matchOf, lineOf } = table;
  const recordAt = new Uint32Array(count).fill(NONE);
  // Pieces of one range under the same enclosing entry share their record.
  const rangeRecords = new Map<string, number>();
  const recordOf = (stack: readonly number[]): number => {
    const top = stack.at(-1)!;
    if (recordAt[top] !== NONE) return recordAt[top]!;
    const match = matchOf[top]!;
    const shareKey = lineOf[match]! < 0 ? `${match},${stack.at(-2) ?? -1}` : null;
    let at = shareKey === null ? undefined : rangeRecords.get(shareKey);
    if (at === undefined) {
      const matches: number[] = [];
      for (let i = stack.length - 1; i >= 0; i--) matches.push(matchOf[stack[i]!]!);
      at = data.record(matches);
      if (shareKey !== null) rangeRecords.set(shareKey, at);
    }
    recordAt[top] = at;
    return at;
  };
  const hi = new Uint32Array(4);
  const topLast = new Uint32Array(4);
  return (emit) => {
    const stack: number[] = [];
    const cursor = new Uint32Array(4);
    let done = false; // the cursor passed the last address
    // The rest of the top entry, from the cursor to its end; then it closes.
    const close = () => {
      lastOf(table, stack.at(-1)!, hi);
      if (!done && compare(hi, cursor) >= 0) {
        emit(cursor, hi, recordOf(stack));
        cursor.set(hi);
        done = !increment(cursor);
      }
      stack.pop();
    };
    // Whether the top entry ends before entry `e` starts.
    const topEndsBefore = (e: number) => {
      lastOf(table, stack.at(-1)!, topLast);
      return compareAt(first, 4 * e, topLast) > 0;
    };
    for (let e = 0; e < count; e++) {
      const start = 4 * e;
      while (stack.length && topEndsBefore(e)) close();
      if (stack.length && compareAt(first, start, cursor) > 0) {
        // The enclosing entry's part before this one.
        copyKey(first, start, hi);
        decrement(hi);
        emit(cursor, hi, recordOf(stack));
      }
      copyKey(first, start, cursor);
      done = false;
      stack.push(e);
    }
    while (stack.length) close();
  };
}

/** Compares the key at `keys[at..at+3]` with `other`. */
function compareAt(keys: Uint32Array, at: number, other: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    if (keys[at + i] !== other[i]) return keys[at + i]! - other[i]!;
  }
  return 0;
}

function copyKey(keys: Uint32Array, at: number, out: Uint32Array): void {
  out[0] = keys[at]!;
  out[1] = keys[at + 1]!;
  out[2] = keys[at + 2]!;
  out[3] = keys[at + 3]!;
}
