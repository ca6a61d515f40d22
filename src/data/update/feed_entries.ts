/**
 * The networks of a feed kind's lists as flat typed arrays (no object per
 * entry, 21 bytes each): each entry's first key and prefix length, and the
 * match it stands for (the list and the line that named it). A range is cut
 * into its CIDRs, each one an entry of the range's match, so any two entries
 * are nested or apart. Sorted in place (a permutation, not a second table).
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
 * The most entries one kind compiles (ranges cut into CIDRs), at about 50
 * bytes each while compiling. A 64 MB list of distinct IPv4 addresses holds
 * about 4.5M; a range list could cut into far more (up to 62 CIDRs a range).
 */
export const MAX_ENTRIES = 5_000_000;

/** Keys and matches of every entry, sorted and without a list's repeats. */
export interface EntryTable {
  /** Entries, in address order: outermost first, a later list's equal network after. */
  count: number;
  /** Per entry, 4 words: its first key (IPv4 at ::/96, mapped networks included). */
  first: Uint32Array;
  /** Per entry, its prefix length in the 128-bit tree (an IPv4 /24 is 120). */
  prefix: Uint8Array;
  /** Per entry, its match. */
  matchOf: Uint32Array;
  /** Per match, the index of its list in `feeds`. */
  listOf: Uint16Array;
  /** Per match, `i` for the list's `networks[i]`, `-1 - j` for its `ranges[j]`. */
  lineOf: Int32Array;
}

/** Writes the last key of entry `e` into `out`. */
export function lastOf(table: EntryTable, e: number, out: Uint32Array): void {
  const length = table.prefix[e]!;
  for (let i = 0; i < 4; i++) {
    const keep = Math.min(32, Math.max(0, length - 32 * i));
    out[i] = (table.first[4 * e + i]! | (keep === 32 ? 0 : 0xffffffff >>> keep)) >>> 0;
  }
}

/** Builds the sorted table of the lists' networks. Throws past `maxEntries`. */
export function buildEntries(
  feeds: readonly NamedFeed[],
  maxEntries = MAX_ENTRIES,
): EntryTable {
  const table = new Growing(feeds, maxEntries);
  const first = new Uint32Array(4);
  const last = new Uint32Array(4);
  feeds.forEach(({ feed }, list) => {
    for (let i = 0; i < feed.networks.length; i++) {
      parseNetworkKeys(feed.networks[i]!, first, last);
      unmap(first, last);
      table.add(first, 128 - hostBits(first, last), table.match(list, i));
    }
    for (let j = 0; j < feed.ranges.length; j++) {
      const [a, b] = feed.ranges[j]!;
      parseAddressKey(a, first);
      parseAddressKey(b, last);
      unmap(first, last);
      const match = table.match(list, -1 - j);
      cidrBlocks(first, last, (start, length) => table.add(start, length, match));
    }
  });
  return sortedWithoutRepeats(table);
}

/** `::ffff:a.b.c.d` → `::a.b.c.d`, the IPv4 subtree, when both ends are mapped. */
function unmap(first: Uint32Array, last: Uint32Array): void {
  const mapped = (k: Uint32Array) => k[0] === 0 && k[1] === 0 && k[2] === 0xffff;
  if (mapped(first) && mapped(last)) first[2] = last[2] = 0;
}

/** The host bits of a CIDR: the bits where its first and last keys differ. */
function hostBits(first: Uint32Array, last: Uint32Array): number {
  let bits = 0;
  for (let i = 0; i < 4; i++) {
    let x = (first[i]! ^ last[i]!) >>> 0;
    while (x !== 0) {
      x &= x - 1;
      bits++;
    }
  }
  return bits;
}

/** Typed arrays that grow by half as entries and matches are added. */
class Growing {
  count = 0;
  first: Uint32Array;
  prefix: Uint8Array;
  matchOf: Uint32Array;
  matches = 0;
  listOf: Uint16Array;
  lineOf: Int32Array;

  constructor(feeds: readonly NamedFeed[], readonly maxEntries: number) {
    const lines = feeds.reduce((n, { feed }) => n + feed.networks.length + feed.ranges.length, 0);
    if (feeds.length > 0xffff) throw new Error(`more than ${0xffff} lists of one kind`);
    const size = Math.max(16, Math.min(lines, maxEntries));
    this.first = new Uint32Array(4 * size);
    this.prefix = new Uint8Array(size);
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

  add(first: Uint32Array, prefix: number, match: number): void {
    if (this.count >= this.maxEntries) {
      throw new Error(
        `the lists hold more than ${this.maxEntries} networks (a range counts as its CIDRs)`,
      );
    }
    if (this.count === this.matchOf.length) {
      this.matchOf = grow(this.matchOf, Uint32Array);
      this.prefix = grow(this.prefix, Uint8Array);
      const keys = new Uint32Array(4 * this.matchOf.length);
      keys.set(this.first);
      this.first = keys;
    }
    this.first.set(first, 4 * this.count);
    this.prefix[this.count] = prefix;
    this.matchOf[this.count++] = match;
  }
}

/** A copy half as long again. */
function grow<T extends Uint32Array | Int32Array | Uint16Array | Uint8Array>(
  array: T,
  Kind: { new (length: number): T },
): T {
  const next = new Kind(Math.ceil(array.length * 1.5));
  next.set(array);
  return next;
}

/**
 * Sorts by first key, then prefix length (an enclosing network first), then
 * the order added (a later list's equal network nests inside the earlier
 * one's); drops a list's repeats of one network. The arrays are permuted in
 * place, following the sorted order's cycles.
 */
function sortedWithoutRepeats(t: Growing): EntryTable {
  const { first, prefix, matchOf, listOf } = t;
  const count = t.count;
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  order.sort((x, y) => {
    const a = 4 * x, b = 4 * y;
    for (let i = 0; i < 4; i++) {
      if (first[a + i] !== first[b + i]) return first[a + i]! - first[b + i]!;
    }
    return prefix[x]! - prefix[y]! || x - y;
  });
  // Entry order[k] goes to slot k: each cycle is walked once (`order` marks the done slots).
  const DONE = 0xffffffff;
  const key = new Uint32Array(4);
  for (let start = 0; start < count; start++) {
    if (order[start] === DONE || order[start] === start) continue;
    key.set(first.subarray(4 * start, 4 * start + 4));
    const keptPrefix = prefix[start]!, keptMatch = matchOf[start]!;
    let slot = start;
    for (;;) {
      const from = order[slot]!;
      order[slot] = DONE;
      if (from === start) {
        first.set(key, 4 * slot);
        prefix[slot] = keptPrefix;
        matchOf[slot] = keptMatch;
        break;
      }
      first.copyWithin(4 * slot, 4 * from, 4 * from + 4);
      prefix[slot] = prefix[from]!;
      matchOf[slot] = matchOf[from]!;
      slot = from;
    }
  }
  // Repeats of a list's network are neighbours now (a list's entries were added together).
  let kept = 0;
  for (let e = 0; e < count; e++) {
    if (
      kept > 0 && listOf[matchOf[kept - 1]!] === listOf[matchOf[e]!] &&
      prefix[kept - 1] === prefix[e] && sameKey(first, 4 * (kept - 1), 4 * e)
    ) continue;
    if (kept !== e) {
      first.copyWithin(4 * kept, 4 * e, 4 * e + 4);
      prefix[kept] = prefix[e]!;
      matchOf[kept] = matchOf[e]!;
    }
    kept++;
  }
  return {
    count: kept,
    first: first.subarray(0, 4 * kept),
    prefix: prefix.subarray(0, kept),
    matchOf: matchOf.subarray(0, kept),
    listOf: listOf.subarray(0, t.matches),
    lineOf: t.lineOf.subarray(0, t.matches),
  };
}

function sameKey(keys: Uint32Array, a: number, b: number): boolean {
  return keys[a] === keys[b] && keys[a + 1] === keys[b + 1] && keys[a + 2] === keys[b + 2] &&
    keys[a + 3] === keys[b + 3];
}
