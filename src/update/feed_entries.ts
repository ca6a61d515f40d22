/**
 * The networks of a feed kind's lists as flat typed arrays (no object per
 * entry): each entry's first and last key, and the match it stands for (the
 * list and the line that named it). A range is cut into its CIDRs, each one
 * an entry of the range's match, so any two entries are nested or apart.
 *
 * IPv4-mapped networks (`::ffff:8.8.8.0/120`) are entered as the IPv4
 * networks they denote (`8.8.8.0/24`): they sort, nest and win by
 * specificity with the IPv4 entries, instead of overwriting them through the
 * tree's alias of ::ffff:0:0/96 (writer.ts).
 */

import { parseAddressKey, parseNetworkKeys } from "../mmdb/writer/key.ts";
import { cidrBlocks } from "../mmdb/writer/key_math.ts";
import type { ParsedFeed } from "./feed_parse.ts";

/** One list of the kind, parsed. */
export interface NamedFeed {
  name: string;
  feed: ParsedFeed;
}

/**
 * The most entries one kind compiles (ranges cut into CIDRs), at about 55
 * bytes each while compiling. A 64 MB list of distinct IPv4 addresses holds
 * about 4.5M; a range list could cut into far more (up to 62 CIDRs a range).
 */
export const MAX_ENTRIES = 5_000_000;

/** Keys and matches of every entry, sorted and without a list's repeats. */
export interface EntryTable {
  /** Entries, in address order: outermost first, a later list's equal network after. */
  count: number;
  /** Per entry, 8 words: first key then last key. */
  keys: Uint32Array;
  /** Per entry, its match. */
  matchOf: Uint32Array;
  /** Per match, the index of its list in `feeds`. */
  listOf: Uint16Array;
  /** Per match, `i` for the list's `networks[i]`, `-1 - j` for its `ranges[j]`. */
  lineOf: Int32Array;
}

/** Builds the sorted table of the lists' networks. Throws past `maxEntries`. */
export function buildEntries(
  feeds: readonly NamedFeed[],
  maxEntries = MAX_ENTRIES,
): EntryTable {
  const table = new Growing(feeds, maxEntries);
  const first = new Uint32Array(4);
  const last = new Uint32Array(4);
  const pieceLast = new Uint32Array(4);
  feeds.forEach(({ feed }, list) => {
    for (let i = 0; i < feed.networks.length; i++) {
      parseNetworkKeys(feed.networks[i]!, first, last);
      unmap(first, last);
      table.add(first, last, table.match(list, i));
    }
    for (let j = 0; j < feed.ranges.length; j++) {
      const [a, b] = feed.ranges[j]!;
      parseAddressKey(a, first);
      parseAddressKey(b, last);
      unmap(first, last);
      const match = table.match(list, -1 - j);
      cidrBlocks(first, last, (start, length) => {
        blockLast(start, length, pieceLast);
        table.add(start, pieceLast, match);
      });
    }
  });
  return sortedWithoutRepeats(table);
}

/** `::ffff:a.b.c.d` → `::a.b.c.d`, the IPv4 subtree, when both ends are mapped. */
function unmap(first: Uint32Array, last: Uint32Array): void {
  const mapped = (k: Uint32Array) => k[0] === 0 && k[1] === 0 && k[2] === 0xffff;
  if (mapped(first) && mapped(last)) first[2] = last[2] = 0;
}

/** The last key of the block of `length` prefix bits at `start`. */
function blockLast(start: Uint32Array, length: number, out: Uint32Array): void {
  for (let i = 0; i < 4; i++) {
    const keep = Math.min(32, Math.max(0, length - 32 * i));
    out[i] = (start[i]! | (keep === 32 ? 0 : 0xffffffff >>> keep)) >>> 0;
  }
}

/** Typed arrays that grow by half as entries and matches are added. */
class Growing {
  count = 0;
  keys: Uint32Array;
  matchOf: Uint32Array;
  matches = 0;
  listOf: Uint16Array;
  lineOf: Int32Array;

  constructor(feeds: readonly NamedFeed[], readonly maxEntries: number) {
    const lines = feeds.reduce((n, { feed }) => n + feed.networks.length + feed.ranges.length, 0);
    if (feeds.length > 0xffff) throw new Error(`more than ${0xffff} lists of one kind`);
    const size = Math.max(16, Math.min(lines, maxEntries));
    this.keys = new Uint32Array(8 * size);
    this.matchOf = new Uint32Array(size);
    this.listOf = new Uint16Array(size);
    this.lineOf = new Int32Array(size);
  }

  match(list: number, line: number): number {
    if (this.matches === this.listOf.length) {
      this.listOf = grow(this.listOf, Uint16Array);
      this.lineOf = grow(this.lineOf, Int32Array);
    }
    this.listOf[this.matches] = list;
    this.lineOf[this.matches] = line;
    return this.matches++;
  }

  add(first: Uint32Array, last: Uint32Array, match: number): void {
    if (this.count >= this.maxEntries) {
      throw new Error(
        `the lists hold more than ${this.maxEntries} networks (a range counts as its CIDRs)`,
      );
    }
    if (this.count === this.matchOf.length) {
      this.matchOf = grow(this.matchOf, Uint32Array);
      const keys = new Uint32Array(8 * this.matchOf.length);
      keys.set(this.keys);
      this.keys = keys;
    }
    const at = 8 * this.count;
    this.keys.set(first, at);
    this.keys.set(last, at + 4);
    this.matchOf[this.count++] = match;
  }
}

/** A copy half as long again. */
function grow<T extends Uint32Array | Int32Array | Uint16Array>(
  array: T,
  Kind: { new (length: number): T },
): T {
  const next = new Kind(Math.ceil(array.length * 1.5));
  next.set(array);
  return next;
}

/**
 * Sorts by first key, then last key descending (an enclosing network first),
 * then the order added (a later list's equal network nests inside the
 * earlier one's); drops a list's repeats of one network.
 */
function sortedWithoutRepeats(t: Growing): EntryTable {
  const { keys, matchOf, listOf } = t;
  const order = new Uint32Array(t.count);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((x, y) => {
    const a = 8 * x, b = 8 * y;
    for (let i = 0; i < 4; i++) if (keys[a + i] !== keys[b + i]) return keys[a + i]! - keys[b + i]!;
    for (let i = 4; i < 8; i++) if (keys[a + i] !== keys[b + i]) return keys[b + i]! - keys[a + i]!;
    return x - y;
  });
  // Rewritten in place, in sorted order: entry k of the result goes to slot k.
  const sortedKeys = new Uint32Array(8 * t.count);
  const sortedMatch = new Uint32Array(t.count);
  let count = 0;
  for (let i = 0; i < order.length; i++) {
    const e = order[i]!;
    if (count > 0 && listOf[sortedMatch[count - 1]!] === listOf[matchOf[e]!]) {
      const prev = 8 * (count - 1);
      let same = true;
      for (let w = 0; w < 8 && same; w++) same = sortedKeys[prev + w] === keys[8 * e + w];
      if (same) continue;
    }
    sortedKeys.set(keys.subarray(8 * e, 8 * e + 8), 8 * count);
    sortedMatch[count++] = matchOf[e]!;
  }
  return {
    count,
    keys: sortedKeys,
    matchOf: sortedMatch,
    listOf: t.listOf.subarray(0, t.matches),
    lineOf: t.lineOf.subarray(0, t.matches),
  };
}
