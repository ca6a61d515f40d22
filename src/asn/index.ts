/**
 * The ASN index: AS number → its networks and name, read from the installed
 * ASN database's tree in one walk. Kept compactly in typed arrays (about
 * 6 MB for the default data's 732,000 networks and 91,000 AS numbers).
 */

import { openMmdb } from "../mmdb/reader.ts";
import type { AsnRecord } from "../mmdb/records.ts";
import { blockBytes, collapse } from "./blocks.ts";
import { type Block, createTreeNetworks } from "./tree_networks.ts";

/** What the index knows of one AS. */
export interface AsnEntry {
  asn: number;
  /** The organisation as the database names it (the first non-empty name of its records). */
  name: string | null;
  /** Collapsed, in address order. */
  ipv4: Block[];
  ipv6: Block[];
}

export interface AsnIndex {
  /** The AS's entry; null when the database holds no network for it. */
  find(asn: number): AsnEntry | null;
  /** How many AS numbers the database holds networks for. */
  readonly size: number;
}

/** A typed array that grows by doubling, for a walk of unknown length. */
class Growing<T extends Uint32Array | Uint8Array> {
  length = 0;
  constructor(public array: T, private readonly make: (n: number) => T) {}
  push(value: number): void {
    if (this.length === this.array.length) {
      const bigger = this.make(this.array.length * 2);
      bigger.set(this.array);
      this.array = bigger;
    }
    this.array[this.length++] = value;
  }
}

const u32 = (n: number) => new Uint32Array(n);
const u8 = (n: number) => new Uint8Array(n);

/** One family's networks, grouped by AS: those of AS rank r are at [offsets[r], offsets[r+1]). */
interface FamilyTable {
  words: Uint32Array;
  lengths: Uint8Array;
  offsets: Uint32Array;
  wordsPer: number;
}

/** The index's content: each family's table and the AS numbers and names by rank. */
interface Tables {
  asns: Uint32Array;
  names: (string | null)[];
  v4: FamilyTable;
  v6: FamilyTable;
}

/**
 * Builds the index of an ASN (or ISP) database's bytes: every network of its
 * tree and the AS number of each record. Each record is decoded once, by a
 * reader of its own (the served one's record cache is left alone).
 */
export function buildAsnIndex(bytes: Uint8Array, label = "ASN database"): AsnIndex {
  // Built apart from the index object, so nothing of the walk stays reachable from it.
  return indexOver(readTables(bytes, label));
}

function readTables(bytes: Uint8Array, label: string): Tables {
  const db = openMmdb<AsnRecord>(bytes, { cacheSize: 16, label });
  const networks = createTreeNetworks(bytes, db.metadata);
  // Record pointer → slot (in first-seen order); a slot per AS number.
  const slotOfRecord = new Map<number, number>();
  const slotOfAsn = new Map<number, number>();
  const asns: number[] = [];
  const names: (string | null)[] = [];
  const slotOf = (family: 4 | 6, words: Uint32Array, length: number, record: number): number => {
    let slot = slotOfRecord.get(record);
    if (slot === undefined) {
      const found = db.getBytes(blockBytes({ family, words, length }));
      const asn = found?.autonomous_system_number;
      const name = found?.autonomous_system_organization || null;
      if (typeof asn !== "number") {
        slot = -1; // a record without an AS number (an ISP database's): not indexed
      } else {
        slot = slotOfAsn.get(asn);
        if (slot === undefined) {
          slotOfAsn.set(asn, slot = asns.length);
          asns.push(asn);
          names.push(name);
        } else if (names[slot] === null) names[slot] = name;
      }
      slotOfRecord.set(record, slot);
    }
    return slot;
  };

  const collect = (family: 4 | 6) => {
    const wordsPer = family === 4 ? 1 : 4;
    const words = new Growing(u32(1 << 16), u32);
    const lengths = new Growing(u8(1 << 14), u8);
    const slots = new Growing(u32(1 << 14), u32);
    networks.all(family, (w, length, record) => {
      const slot = slotOf(family, w, length, record);
      if (slot < 0) return;
      for (let i = 0; i < wordsPer; i++) words.push(w[i]!);
      lengths.push(length);
      slots.push(slot);
    });
    return { wordsPer, words: words.array, lengths: lengths.array, slots, count: lengths.length };
  };
  const v4 = collect(4);
  const v6 = collect(6);

  // Ranks: slots sorted by AS number, so a lookup is a binary search.
  const order = asns.map((_, slot) => slot).sort((a, b) => asns[a]! - asns[b]!);
  const rankOfSlot = new Uint32Array(asns.length);
  order.forEach((slot, rank) => rankOfSlot[slot] = rank);
  const sortedAsns = Uint32Array.from(order, (slot) => asns[slot]!);
  const sortedNames = order.map((slot) => names[slot]!);

  /** Counting sort by rank; stable, so each AS's networks stay in address order. */
  const group = (c: ReturnType<typeof collect>): FamilyTable => {
    const offsets = new Uint32Array(asns.length + 1);
    for (let i = 0; i < c.count; i++) offsets[rankOfSlot[c.slots.array[i]!]! + 1]!++;
    for (let r = 0; r < asns.length; r++) offsets[r + 1]! += offsets[r]!;
    const next = offsets.slice(0, asns.length);
    const words = new Uint32Array(c.count * c.wordsPer);
    const lengths = new Uint8Array(c.count);
    for (let i = 0; i < c.count; i++) {
      const at = next[rankOfSlot[c.slots.array[i]!]!]!++;
      lengths[at] = c.lengths[i]!;
      words.set(c.words.subarray(i * c.wordsPer, (i + 1) * c.wordsPer), at * c.wordsPer);
    }
    return { words, lengths, offsets, wordsPer: c.wordsPer };
  };
  return { asns: sortedAsns, names: sortedNames, v4: group(v4), v6: group(v6) };
}

function indexOver(tables: Tables): AsnIndex {
  const { asns, names } = tables;
  const blocksOf = (family: 4 | 6, rank: number): Block[] => {
    const t = family === 4 ? tables.v4 : tables.v6;
    const blocks: Block[] = [];
    for (let i = t.offsets[rank]!; i < t.offsets[rank + 1]!; i++) {
      const words = t.words.slice(i * t.wordsPer, (i + 1) * t.wordsPer);
      blocks.push({ family, words, length: t.lengths[i]! });
    }
    return collapse(blocks);
  };

  return {
    size: asns.length,
    find(asn) {
      let lo = 0;
      let hi = asns.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const at = asns[mid]!;
        if (at === asn) {
          return { asn, name: names[mid]!, ipv4: blocksOf(4, mid), ipv6: blocksOf(6, mid) };
        }
        if (at < asn) lo = mid + 1;
        else hi = mid - 1;
      }
      return null;
    },
  };
}
