/**
 * Compiles the lists of one feed kind into the files the server opens: one
 * MaxMind DB tree (IPv4 and IPv6) of every listed network, and a JSON map of
 * the AS numbers that ASN-based lists give to the lists naming each.
 *
 * A tree's record says which lists cover the address and by which of their
 * networks (`matches`, the most specific first), so the `risk` group can name
 * every source; geofeed entries carry their place too. Overlaps are resolved
 * here, not by insertion order: the address space is cut at every entry's
 * start and end, and each piece gets the entries covering all of it.
 */

import { parseNetworkKeys } from "../mmdb/writer/key.ts";
import { type MmdbValue, MmdbWriter } from "../mmdb/writer/writer.ts";
import { formatIpv6 } from "../ip/parse.ts";
import type { FeedKind } from "../sources/manifest.ts";
import type { FeedMatchRecord } from "../sources/records.ts";
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
  first: bigint;
  last: bigint;
  /** Input order, to keep equal-sized matches stable. */
  order: number;
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
    insertPieces(writer, entriesOf(withNetworks));
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

const A = new Uint32Array(4);
const B = new Uint32Array(4);

function keyOf(words: Uint32Array): bigint {
  return (BigInt(words[0]!) << 96n) | (BigInt(words[1]!) << 64n) | (BigInt(words[2]!) << 32n) |
    BigInt(words[3]!);
}

/** Every network and range of the lists, each list's repeats dropped. */
function entriesOf(feeds: readonly NamedFeed[]): Entry[] {
  const entries: Entry[] = [];
  for (const { name, feed } of feeds) {
    const seen = new Set<string>();
    const add = (first: bigint, last: bigint, match: FeedMatchRecord) => {
      const id = `${first}-${last}`;
      if (seen.has(id)) return;
      seen.add(id);
      entries.push({ first, last, order: entries.length, match });
    };
    feed.networks.forEach((network, i) => {
      parseNetworkKeys(network, A, B);
      const place = feed.places?.[i];
      const match: FeedMatchRecord = { source: name, network };
      if (place) {
        for (const key of ["country", "region", "city", "postal"] as const) {
          if (place[key] !== null) match[key] = place[key]!;
        }
      }
      add(keyOf(A), keyOf(B), match);
    });
    for (const [first, last] of feed.ranges) {
      parseNetworkKeys(first, A, B);
      const lo = keyOf(A);
      parseNetworkKeys(last, A, B);
      add(lo, keyOf(A), { source: name, network: `${first}-${last}` });
    }
  }
  return entries;
}

/**
 * Cuts the space at every entry's first address and one past its last, and
 * inserts each covered piece with the entries covering it, smallest first.
 */
function insertPieces(writer: MmdbWriter, entries: Entry[]): void {
  const events: { at: bigint; entry: Entry; open: boolean }[] = [];
  for (const entry of entries) {
    events.push({ at: entry.first, entry, open: true });
    events.push({ at: entry.last + 1n, entry, open: false });
  }
  events.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  const active = new Set<Entry>();
  let record: MmdbValue | null = null;
  for (let i = 0; i < events.length;) {
    const at = events[i]!.at;
    for (; i < events.length && events[i]!.at === at; i++) {
      const { entry, open } = events[i]!;
      if (open) active.add(entry);
      else active.delete(entry);
      record = null;
    }
    if (active.size === 0 || i === events.length) continue;
    record ??= {
      matches: [...active]
        .sort((x, y) => {
          const size = (x.last - x.first) - (y.last - y.first);
          return size < 0n ? -1 : size > 0n ? 1 : x.order - y.order;
        })
        .map((e) => ({ ...e.match })),
    };
    const last = events[i]!.at - 1n;
    const ipv6 = last > 0xffffffffn;
    writer.insertRange(textOf(at, ipv6), textOf(last, ipv6), record);
  }
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
