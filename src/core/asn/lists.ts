/**
 * How much of an AS each installed security list names: the AS's networks
 * intersected with each list's compiled tree (a walk below each of its
 * prefixes, so the cost follows the list's entries inside the AS, not the
 * AS's size), and the AS-number lists, which name all of it.
 */

import type { MmdbDatabase } from "../../data/mmdb/reader.ts";
import type { FeedRecord } from "../../data/mmdb/records.ts";
import { RISK_KINDS } from "../../data/risk/security.ts";

/** The kinds whose lists the view counts: the security lists, then the crawlers' ranges. */
const LIST_KINDS = [...RISK_KINDS, "crawler"] as const;
import type { DataSet } from "../../data/sources/data_set.ts";
import { blockBytes, copyBlock, createSlash64Counter, ipv4Size } from "./blocks.ts";
import { type Block, createTreeNetworks, type TreeNetworks } from "./tree_networks.ts";

/** One list's share of an AS. */
export interface ListShare {
  /** The list's name in the sources file. */
  source: string;
  kind: string;
  ipv4Addresses: number;
  ipv6Slash64s: number;
}

/** The AS as the counts need it. */
export interface AsnSpace {
  asn: number;
  ipv4: readonly Block[];
  ipv6: readonly Block[];
  /** Its own totals: what an AS-number list names. */
  ipv4Addresses: number;
  ipv6Slash64s: number;
}

/** Each tree's walker and decoded records, made once per tree (weak: they go with the data set). */
const walkers = new WeakMap<MmdbDatabase<FeedRecord>, TreeNetworks>();

function walkerOf(tree: MmdbDatabase<FeedRecord>): TreeNetworks {
  let walker = walkers.get(tree);
  if (!walker) walkers.set(tree, walker = createTreeNetworks(tree.bytes, tree.metadata));
  return walker;
}

/** The lists a feed record names (trees compiled before matches were kept name one `source`). */
function sourcesOf(record: FeedRecord | null): string[] {
  if (!record) return [];
  if (record.matches) return [...new Set(record.matches.map((m) => m.source))];
  return record.source ? [record.source] : [];
}

/**
 * The installed lists naming part of the AS, by kind (tor, vpn, hosting,
 * threat, relay, allow, then the crawlers' published ranges) then name; lists
 * naming none of it are left out.
 */
export function listShares(data: Pick<DataSet, "feeds">, space: AsnSpace): ListShare[] {
  const shares: ListShare[] = [];
  for (const kind of LIST_KINDS) {
    const content = data.feeds?.[kind];
    if (!content) continue;
    const found = new Map<string, { v4: number; v6: ReturnType<typeof createSlash64Counter> }>();
    const share = (source: string) => {
      let s = found.get(source);
      if (!s) found.set(source, s = { v4: 0, v6: createSlash64Counter() });
      return s;
    };
    const whole = new Set(content.asns.get(space.asn) ?? []);
    for (const tree of content.trees) {
      const walker = walkerOf(tree);
      const records = new Map<number, string[]>();
      for (const block of [...space.ipv4, ...space.ipv6]) {
        walker.within(block, (words, length, record) => {
          let sources = records.get(record);
          const piece = copyBlock(block.family, words, length);
          if (!sources) records.set(record, sources = sourcesOf(tree.getBytes(blockBytes(piece))));
          for (const source of sources) {
            if (whole.has(source)) continue;
            if (block.family === 4) share(source).v4 += ipv4Size(length);
            else share(source).v6.add(piece);
          }
        });
      }
    }
    for (const source of [...whole, ...found.keys()].sort()) {
      const s = whole.has(source) ? null : found.get(source)!;
      shares.push({
        source,
        kind,
        ipv4Addresses: s ? s.v4 : space.ipv4Addresses,
        ipv6Slash64s: s ? s.v6.total : space.ipv6Slash64s,
      });
    }
  }
  return shares;
}
