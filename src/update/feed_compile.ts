/**
 * Compiles the lists of one feed kind into the files the server opens: one
 * MaxMind DB tree (IPv4 and IPv6) of every listed network, and a JSON array of
 * the AS numbers that ASN-based lists give.
 */

import { MmdbWriter } from "../mmdb/writer/writer.ts";
import type { FeedKind } from "../sources/manifest.ts";
import type { ParsedFeed } from "./feed_parse.ts";

/** One list of the kind, parsed. */
export interface NamedFeed {
  name: string;
  feed: ParsedFeed;
}

export interface CompiledFeeds {
  /** The tree, or null when no list of the kind gives networks. */
  tree: Uint8Array | null;
  /** `[13335, ...]` as JSON, or null when no list gives AS numbers. */
  asns: Uint8Array | null;
}

/** The `database_type` of a compiled feed tree. */
export function feedDatabaseType(kind: FeedKind): string {
  return `ipintel-${kind}`;
}

/**
 * Compiles the feeds; a network listed by several feeds keeps the name of
 * the last one (membership is the union either way).
 */
export function compileFeeds(kind: FeedKind, feeds: readonly NamedFeed[]): CompiledFeeds {
  const withNetworks = feeds.filter(({ feed }) => feed.networks.length || feed.ranges.length);
  let tree: Uint8Array | null = null;
  if (withNetworks.length) {
    const writer = new MmdbWriter({
      databaseType: feedDatabaseType(kind),
      description: { en: `${kind} networks from ${withNetworks.map((f) => f.name).join(", ")}` },
    });
    for (const { name, feed } of withNetworks) {
      const record = { source: name };
      for (const network of feed.networks) writer.insertNetwork(network, record);
      for (const [first, last] of feed.ranges) writer.insertRange(first, last, record);
    }
    tree = writer.toBytes();
  }
  const asnSet = new Set(feeds.flatMap(({ feed }) => feed.asns));
  const asns = asnSet.size
    ? new TextEncoder().encode(JSON.stringify([...asnSet].sort((a, b) => a - b)))
    : null;
  return { tree, asns };
}
