/**
 * Compiles the lists of one feed kind into the files the server opens: one
 * MaxMind DB tree (IPv4 and IPv6) of every listed network, and a JSON map of
 * the AS numbers that ASN-based lists give to the lists naming each.
 *
 * A tree's record says which lists cover the address and by which of their
 * networks (`matches`, the most specific first), so the `risk` group can name
 * every source; geofeed entries carry their place too. Overlaps are resolved
 * here: entries go in outermost first, each carrying the ones enclosing it.
 */

import { compareKeys, parseNetworkKeys } from "../mmdb/writer/key.ts";
import { type MmdbValue, MmdbWriter } from "../mmdb/writer/writer.ts";
import { formatIpv6 } from "../ip/parse.ts";
import type { FeedKind } from "../sources/manifest.ts";
import type { FeedMatchRecord } from "../mmdb/records.ts";
import type { ParsedFeed } from "./feed_parse.ts";

/** One list of the kind, parsed. */
export interface NamedFeed {
  name: string;
  feed: ParsedFeed;
}

export interface CompiledFeeds {
  /** The tree, or null when no list of the kind gives networks. */
  tree: Uint8Array | null;
  /** `{"13335": ["list", ...]}` as JSON, or null when no list gives AS numbers. */
  asns: Uint8Array | null;
}

/** The `database_type` of a compiled feed tree. */
export function feedDatabaseType(kind: FeedKind): string {
  return `ipintel-${kind}`;
}

interface Entry {
  /** First and last key (4 big-endian words, IPv4 at ::/96). */
  first: Uint32Array;
  last: Uint32Array;
  /** The CIDR to insert (a range is cut into CIDRs, each keeping the range's text). */
  cidr: string;
  match: FeedMatchRecord;
}

/** Compiles the feeds of a kind; membership is the union of the lists. */
export function compileFeeds(kind: FeedKind, feeds: readonly NamedFeed[]): CompiledFeeds {
  const withNetworks = feeds.filter(({ feed }) => feed.networks.length || feed.ranges.length);
  let tree: Uint8Array | null = null;
  if (withNetworks.length) {
    const writer = new MmdbWriter({
      databaseType: feedDatabaseType(kind),
      description: { en: `${kind} networks from ${withNetworks.map((f) => f.name).join(", ")}` },
    });
    insertNested(writer, entriesOf(withNetworks));
    tree = writer.toBytes();
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

/** Every network of the lists (ranges cut into CIDRs), each list's repeats dropped. */
function entriesOf(feeds: readonly NamedFeed[]): Entry[] {
  const entries: Entry[] = [];
  for (const { name, feed } of feeds) {
    const seen = new Set<string>();
    const add = (cidr: string, match: FeedMatchRecord) => {
      const first = new Uint32Array(4);
      const last = new Uint32Array(4);
      parseNetworkKeys(cidr, first, last);
      const id = `${first.join(".")}-${last.join(".")}`;
      if (seen.has(id)) return;
      seen.add(id);
      entries.push({ first, last, cidr, match });
    };
    feed.networks.forEach((network, i) => {
      const place = feed.places?.[i];
      const match: FeedMatchRecord = { source: name, network };
      if (place) {
        for (const key of ["country", "region", "city", "postal"] as const) {
          if (place[key] !== null) match[key] = place[key]!;
        }
      }
      add(network, match);
    });
    for (const [first, last] of feed.ranges) {
      const network = `${first}-${last}`;
      for (const cidr of rangeCidrs(first, last)) add(cidr, { source: name, network });
    }
  }
  return entries;
}

/**
 * Inserts CIDRs (any two are nested or apart) outermost first, each with the
 * entries enclosing it: a nested insert overwrites its part of the outer one,
 * so every address gets every entry covering it, the innermost first.
 */
function insertNested(writer: MmdbWriter, entries: Entry[]): void {
  entries.sort((x, y) => compareKeys(x.first, y.first) || compareKeys(y.last, x.last));
  const open: Entry[] = [];
  for (const entry of entries) {
    while (open.length && compareKeys(open.at(-1)!.last, entry.first) < 0) open.pop();
    open.push(entry);
    const matches: MmdbValue[] = [];
    for (let i = open.length - 1; i >= 0; i--) matches.push({ ...open[i]!.match });
    writer.insertNetwork(entry.cidr, { matches });
  }
}

/** The CIDRs that exactly cover an address range (checked by the parser: one family, in order). */
function rangeCidrs(first: string, last: string): string[] {
  const a = new Uint32Array(4);
  const b = new Uint32Array(4);
  parseNetworkKeys(first, a, b);
  const v4 = !first.includes(":");
  let lo = keyOf(a);
  parseNetworkKeys(last, a, b);
  const hi = keyOf(a);
  const bits = v4 ? 32 : 128;
  const out: string[] = [];
  while (lo <= hi) {
    let size = 0;
    while (
      size < bits && (lo & ((1n << BigInt(size + 1)) - 1n)) === 0n &&
      lo + (1n << BigInt(size + 1)) - 1n <= hi
    ) size++;
    out.push(`${textOf(lo, !v4)}/${bits - size}`);
    lo += 1n << BigInt(size);
  }
  return out;
}

function keyOf(words: Uint32Array): bigint {
  return (BigInt(words[0]!) << 96n) | (BigInt(words[1]!) << 64n) | (BigInt(words[2]!) << 32n) |
    BigInt(words[3]!);
}

/** A key as address text: a dotted quad (the IPv4 subtree, ::/96) unless `ipv6`. */
function textOf(key: bigint, ipv6: boolean): string {
  if (!ipv6) {
    return [24n, 16n, 8n, 0n].map((shift) => (key >> shift) & 0xffn).join(".");
  }
  const bytes = new Uint8Array(16);
  for (let i = 15, k = key; i >= 0; i--, k >>= 8n) bytes[i] = Number(k & 0xffn);
  return formatIpv6(bytes);
}
