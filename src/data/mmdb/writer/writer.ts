/**
 * MaxMind DB (format 2.0) writer: builds an .mmdb file in memory from CIDR networks
 * or address ranges and their data records. Pure module: no I/O, no side effects.
 *
 * The file always has one IPv6 tree (metadata ip_version 6):
 * - IPv4 a.b.c.d is stored at ::a.b.c.d (::/96), where mmdb-lib and libmaxminddb look
 *   IPv4 up.
 * - Three IPv6 networks are aliases of the IPv4 subtree, as MaxMind's own writer makes
 *   them (`alias_ipv6_to_ipv4`): their tree record points at the node of ::/96, so a
 *   lookup there answers for the IPv4 address the IPv6 address embeds
 *   (docs/decisions.md, "IPv6 transition ranges"):
 *   - ::ffff:0:0/96 (IPv4-mapped): `::ffff:8.8.8.8` finds 8.8.8.8. The part of an IPv6
 *     insert that falls inside it is applied to the matching IPv4 addresses instead
 *     (`::ffff:1.2.3.0/120` ≡ `1.2.3.0/24`).
 *   - 2002::/16 (6to4): `2002:808:808::1` finds 8.8.8.8 (bits 16–47), prefix 16 + n.
 *   - 2001::/32 (Teredo): `2001:0:808:808::1` finds 8.8.8.8 (bits 32–63: the Teredo
 *     server, not the client), prefix 32 + n.
 *   The part of an IPv6 insert that falls inside 2002::/16 or 2001::/32 is dropped: the
 *   alias wins there (a real ASN table lists 2002::/16 under the relays' AS).
 *
 * Overlaps: the later insert wins for every address it covers. An insert replaces
 * whatever lies beneath it; a later, smaller insert inside an earlier larger one
 * splits it, and the rest of the larger one keeps its data. Consequently an IPv6
 * insert covering ::/96 (e.g. ::/8) overwrites IPv4 data inserted before it.
 *
 * Adjacent networks that end up with identical data are merged in the output (a node
 * whose two halves hold the same record is dropped), so a reader's prefix length is
 * that of the largest aligned block with uniform data, not necessarily of the insert.
 */

import {
  ByteWriter,
  writeArrayHeader,
  writeMapHeader,
  writeString,
  writeUint16,
  writeUint32,
  writeUint64,
} from "./encode.ts";
import { DataStore } from "./data.ts";
import type { MmdbValue } from "./value.ts";
import { compareKeys, parseAddressKey, parseNetworkKeys } from "./key.ts";
import { SearchTree } from "./tree.ts";

export { double, float, int32, TypedValue, uint128, uint16, uint32, uint64 } from "./value.ts";
export type { MmdbValue, TypedKind } from "./value.ts";

/** Options for `MmdbWriter`; they end up in the metadata section. */
export interface WriterOptions {
  /** Structure name of the records, e.g. "GeoLite2-ASN". */
  databaseType: string;
  /** Locale codes the records are localised into; default []. */
  languages?: string[];
  /** Language code → description; default { en: databaseType }. */
  description?: Record<string, string>;
  /** Build time, Unix seconds; default now. */
  buildEpoch?: number;
  /** Bits per tree record; default: the smallest that fits node count + data size. */
  recordSize?: 24 | 28 | 32;
}

/** What precedes the metadata map (the spec's "\xab\xcd\xefMaxMind.com"). */
export const METADATA_MARKER = new Uint8Array([
  0xab,
  0xcd,
  0xef,
  ...new TextEncoder().encode("MaxMind.com"),
]);

/** An IPv6 network whose tree record points at the IPv4 subtree. */
export interface Alias {
  first: Uint32Array;
  last: Uint32Array;
  /** The address just before `first` and just after `last`. */
  before: Uint32Array;
  after: Uint32Array;
  prefixLength: number;
  /** Inserts inside it go to the IPv4 addresses it mirrors (else they are dropped). */
  mapsInserts: boolean;
}

const ONES = 0xffffffff;

/** The aliases in address order (the insert splitting relies on it). */
export const ALIASES: readonly Alias[] = [
  {
    first: new Uint32Array([0, 0, 0xffff, 0]),
    last: new Uint32Array([0, 0, 0xffff, ONES]),
    before: new Uint32Array([0, 0, 0xfffe, ONES]),
    after: new Uint32Array([0, 0, 0x10000, 0]),
    prefixLength: 96,
    mapsInserts: true,
  },
  {
    first: new Uint32Array([0x20010000, 0, 0, 0]),
    last: new Uint32Array([0x20010000, ONES, ONES, ONES]),
    before: new Uint32Array([0x2000ffff, ONES, ONES, ONES]),
    after: new Uint32Array([0x20010001, 0, 0, 0]),
    prefixLength: 32,
    mapsInserts: false,
  },
  {
    first: new Uint32Array([0x20020000, 0, 0, 0]),
    last: new Uint32Array([0x2002ffff, ONES, ONES, ONES]),
    before: new Uint32Array([0x2001ffff, ONES, ONES, ONES]),
    after: new Uint32Array([0x20030000, 0, 0, 0]),
    prefixLength: 16,
    mapsInserts: false,
  },
];

/**
 * The smallest record size (24, 28 or 32 bits) whose records can hold every value the
 * tree needs: node numbers, "no data" (= node count) and node count + 16 + data offset.
 * Throws when even 32 bits are too few.
 */
export function pickRecordSize(nodeCount: number, dataSize: number): 24 | 28 | 32 {
  const maxRecord = nodeCount + 16 + dataSize;
  for (const size of [24, 28, 32] as const) if (maxRecord < 2 ** size) return size;
  throw new Error(`tree too large for 32-bit records (${nodeCount} nodes, ${dataSize} data bytes)`);
}

/**
 * Builds a MaxMind DB file. Insert networks or ranges with their records (later inserts
 * win where they overlap), then call `toBytes`. Identical records are stored once, and
 * repeated nested values (strings, map keys, sub-maps, arrays) are written once and
 * referenced by pointers wherever a pointer is shorter.
 */
export class MmdbWriter {
  readonly #tree = new SearchTree();
  readonly #store = new DataStore();
  readonly #options:
    & Omit<Required<WriterOptions>, "recordSize">
    & Pick<WriterOptions, "recordSize">;
  // Scratch keys, reused so inserts do not allocate.
  readonly #first = new Uint32Array(4);
  readonly #last = new Uint32Array(4);
  readonly #lo = new Uint32Array(4);
  readonly #hi = new Uint32Array(4);

  /** Throws on invalid options (empty database type, unsupported record size, ...). */
  constructor(options: WriterOptions) {
    const { databaseType, languages = [], description, buildEpoch, recordSize } = options ?? {};
    if (typeof databaseType !== "string" || databaseType === "") {
      throw new Error("MmdbWriter: databaseType must be a non-empty string");
    }
    if (!Array.isArray(languages) || languages.some((l) => typeof l !== "string")) {
      throw new Error("MmdbWriter: languages must be an array of strings");
    }
    const desc = description ?? { en: databaseType };
    if (Object.values(desc).some((d) => typeof d !== "string")) {
      throw new Error("MmdbWriter: description values must be strings");
    }
    const epoch = buildEpoch ?? Math.floor(Date.now() / 1000);
    if (!Number.isSafeInteger(epoch) || epoch < 0) {
      throw new Error(`MmdbWriter: buildEpoch ${epoch} is not a non-negative integer (seconds)`);
    }
    if (recordSize !== undefined && recordSize !== 24 && recordSize !== 28 && recordSize !== 32) {
      throw new Error(`MmdbWriter: recordSize ${recordSize} is not 24, 28 or 32`);
    }
    this.#options = {
      databaseType,
      languages: [...languages],
      description: { ...desc },
      buildEpoch: epoch,
      recordSize,
    };
  }

  /**
   * Stores `data` for a network: "1.2.3.0/24", "2001:db8::/32", or a bare address
   * (= /32 or /128). Host bits below the prefix must be zero. Throws naming the input.
   */
  insertNetwork(cidr: string, data: MmdbValue): void {
    try {
      parseNetworkKeys(cidr, this.#first, this.#last);
    } catch (e) {
      throw new Error(`MmdbWriter.insertNetwork: invalid network ${show(cidr)}: ${reason(e)}`);
    }
    const leaf = this.#leaf(data, () => `insertNetwork(${show(cidr)})`);
    this.#insert(this.#first, this.#last, leaf);
  }

  /**
   * Stores `data` for every address from `first` to `last` inclusive (same family,
   * first ≤ last); the range need not be CIDR-aligned. Throws naming the input.
   */
  insertRange(first: string, last: string, data: MmdbValue): void {
    // Built only on error: formatting it for every insert is measurable.
    const where = () => `MmdbWriter.insertRange(${show(first)}, ${show(last)})`;
    let v4a: boolean, v4b: boolean;
    try {
      v4a = parseAddressKey(first, this.#first);
    } catch (e) {
      throw new Error(`${where()}: invalid first address ${show(first)}: ${reason(e)}`);
    }
    try {
      v4b = parseAddressKey(last, this.#last);
    } catch (e) {
      throw new Error(`${where()}: invalid last address ${show(last)}: ${reason(e)}`);
    }
    if (v4a !== v4b) throw new Error(`${where()}: mixes IPv4 and IPv6`);
    if (compareKeys(this.#first, this.#last) > 0) {
      throw new Error(`${where()}: first address is after last address`);
    }
    const leaf = this.#leaf(data, () => where().slice("MmdbWriter.".length));
    this.#insert(this.#first, this.#last, leaf);
  }

  #leaf(data: MmdbValue, where: () => string): number {
    try {
      return ~this.#store.intern(data);
    } catch (e) {
      throw new Error(`MmdbWriter.${where()}: invalid data: ${reason(e)}`);
    }
  }

  #insert(f: Uint32Array, l: Uint32Array, leaf: number): void {
    const tree = this.#tree;
    let from = f;
    for (const alias of ALIASES) {
      if (compareKeys(l, alias.first) < 0) break;
      if (compareKeys(from, alias.last) > 0) continue;
      // [from, l] touches the alias: the part before it goes in as-is, the inside part
      // goes to the IPv4 space it mirrors (or nowhere), the rest goes round the loop.
      if (compareKeys(from, alias.first) < 0) tree.insertRange(from, alias.before, leaf);
      if (alias.mapsInserts) {
        const lo = this.#lo.fill(0);
        const hi = this.#hi.fill(0);
        lo[3] = compareKeys(from, alias.first) < 0 ? 0 : from[3]!;
        hi[3] = compareKeys(l, alias.last) > 0 ? ONES : l[3]!;
        tree.insertRange(lo, hi, leaf);
      }
      if (compareKeys(l, alias.last) <= 0) return;
      from = alias.after;
    }
    tree.insertRange(from, l, leaf);
  }

  /**
   * Serialises the database: search tree, 16-byte separator, data section, metadata
   * marker and metadata map. The writer stays usable (more inserts, another `toBytes`).
   * Throws if a forced `recordSize` is too small for the tree and data.
   */
  toBytes(): Uint8Array {
    const opts = this.#options;
    const tree = this.#tree;
    for (const alias of ALIASES) tree.linkAlias(alias.first, alias.prefixLength);
    const section = this.#store.section();
    const plan = tree.plan((id) => section.top(id));
    const dataSize = section.w.len;
    const auto = pickRecordSize(plan.nodeCount, dataSize);
    const recordSize = opts.recordSize ?? auto;
    if (recordSize < auto) {
      throw new Error(
        `MmdbWriter.toBytes: recordSize ${recordSize} is too small for ${plan.nodeCount} nodes ` +
          `and ${dataSize} data bytes (needs ${auto})`,
      );
    }
    const meta = metadataSection(opts, plan.nodeCount, recordSize);
    const treeSize = (plan.nodeCount * recordSize) / 4;
    const out = new Uint8Array(treeSize + 16 + dataSize + METADATA_MARKER.length + meta.length);
    const base = plan.nodeCount + 16;
    tree.write(plan, recordSize, out, (id) => base + section.top(id));
    // The 16 separator bytes are already zero.
    out.set(section.w.buf.subarray(0, dataSize), treeSize + 16);
    out.set(METADATA_MARKER, treeSize + 16 + dataSize);
    out.set(meta, treeSize + 16 + dataSize + METADATA_MARKER.length);
    return out;
  }
}

/** The metadata map of a database (written without pointers: readers decode it on its own). */
export function metadataSection(
  o: Omit<Required<WriterOptions>, "recordSize">,
  nodeCount: number,
  recordSize: number,
): Uint8Array {
  const w = new ByteWriter(1024);
  writeMapHeader(w, 9);
  writeString(w, "binary_format_major_version");
  writeUint16(w, 2);
  writeString(w, "binary_format_minor_version");
  writeUint16(w, 0);
  writeString(w, "build_epoch");
  writeUint64(w, BigInt(o.buildEpoch));
  writeString(w, "database_type");
  writeString(w, o.databaseType);
  writeString(w, "description");
  const desc = Object.entries(o.description);
  writeMapHeader(w, desc.length);
  for (const [lang, text] of desc) {
    writeString(w, lang);
    writeString(w, text);
  }
  writeString(w, "ip_version");
  writeUint16(w, 6);
  writeString(w, "languages");
  writeArrayHeader(w, o.languages.length);
  for (const lang of o.languages) writeString(w, lang);
  writeString(w, "node_count");
  writeUint32(w, nodeCount);
  writeString(w, "record_size");
  writeUint16(w, recordSize);
  return w.buf.slice(0, w.len);
}

function show(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
