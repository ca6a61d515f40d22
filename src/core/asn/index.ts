/**
 * The ASN index: AS number → its networks and name, read from the installed
 * ASN database's tree in one walk. Kept compactly in typed arrays: no object
 * per network, whatever the database's size.
 */

import { openMmdb } from "../../data/mmdb/reader.ts";
import type { AsnRecord } from "../../data/mmdb/records.ts";
import { collapse } from "./blocks.ts";
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
  const build = readTables(bytes, label);
  let step = build.next();
  while (!step.done) step = build.next();
  // Built apart from the index object, so nothing of the walk stays reachable from it.
  return indexOver(step.value);
}

/**
 * The same build in slices of about `sliceMs`, pausing between them (a
 * macrotask), so a server goes on answering other requests while it runs.
 */
export async function buildAsnIndexInSlices(
  bytes: Uint8Array,
  label = "ASN database",
  sliceMs = 10,
): Promise<AsnIndex> {
  const build = readTables(bytes, label);
  let since = performance.now();
  let step = build.next();
  while (!step.done) {
    if (performance.now() - since >= sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      since = performance.now();
    }
    step = build.next();
  }
  return indexOver(step.value);
}

/** The /8 blocks of a family in address order: the pieces a build walks between pauses. */
function eighths(family: 4 | 6): Block[] {
  return Array.from({ length: 256 }, (_, i) => ({
    family,
    words: family === 4 ? Uint32Array.of(i << 24) : Uint32Array.of(i << 24, 0, 0, 0),
    length: 8,
  }));
}

/** Reads the tables, yielding after each /8 of each walk (see buildAsnIndexInSlices). */
function* readTables(bytes: Uint8Array, label: string): Generator<void, Tables> {
  const db = openMmdb<AsnRecord>(bytes, { cacheSize: 16, label });
  const networks = createTreeNetworks(bytes, db.metadata);
  // Record pointer → slot (in first-seen order); a slot per AS number.
  const slotOfRecord = new Map<number, number>();
  const slotOfAsn = new Map<number, number>();
  const asns: number[] = [];
  const names: (string | null)[] = [];
  /** Networks per slot and family. */
  const counts = { 4: [] as number[], 6: [] as number[] };
  // One address buffer per family, reused: the reader keeps none of it.
  const address = { 4: new Uint8Array(4), 6: new Uint8Array(16) };
  const slotOf = (family: 4 | 6, words: Uint32Array, record: number): number => {
    let slot = slotOfRecord.get(record);
    if (slot === undefined) {
      const bytes = address[family];
      for (let i = 0; i < bytes.length; i++) bytes[i] = words[i >>> 2]! >>> (24 - 8 * (i & 3));
      const found = db.getBytes(bytes);
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
          counts[4].push(0); // kept packed: one entry per slot from the start
          counts[6].push(0);
        } else if (names[slot] === null) names[slot] = name;
      }
      slotOfRecord.set(record, slot);
    }
    return slot;
  };

  // Two walks, so every array is made once at its final size (no growing, no copies: the
  // peak memory of a build is the index itself). First: each record's AS, each AS's count.
  for (const family of [4, 6] as const) {
    for (const block of eighths(family)) {
      networks.within(block, (words, _length, record) => {
        const slot = slotOf(family, words, record);
        if (slot >= 0) counts[family][slot]!++;
      });
      yield;
    }
  }

  // Ranks: slots sorted by AS number, so a lookup is a binary search.
  const order = asns.map((_, slot) => slot).sort((a, b) => asns[a]! - asns[b]!);
  const rankOfSlot = new Uint32Array(asns.length);
  order.forEach((slot, rank) => rankOfSlot[slot] = rank);
  const sortedAsns = Uint32Array.from(order, (slot) => asns[slot]!);
  const sortedNames = order.map((slot) => names[slot]!);

  /** Second walk: each network straight to its place, grouped by rank, in address order. */
  function* place(family: 4 | 6): Generator<void, FamilyTable> {
    const wordsPer = family === 4 ? 1 : 4;
    const offsets = new Uint32Array(asns.length + 1);
    order.forEach((slot, rank) => offsets[rank + 1] = offsets[rank]! + counts[family][slot]!);
    const total = offsets[asns.length]!;
    const next = offsets.slice(0, asns.length);
    const words = new Uint32Array(total * wordsPer);
    const lengths = new Uint8Array(total);
    for (const block of eighths(family)) {
      networks.within(block, (w, length, record) => {
        const slot = slotOfRecord.get(record)!;
        if (slot < 0) return;
        const at = next[rankOfSlot[slot]!]!++;
        lengths[at] = length;
        for (let i = 0; i < wordsPer; i++) words[at * wordsPer + i] = w[i]!;
      });
      yield;
    }
    return { words, lengths, offsets, wordsPer };
  }
  const v4 = yield* place(4);
  const v6 = yield* place(6);
  return { asns: sortedAsns, names: sortedNames, v4, v6 };
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
