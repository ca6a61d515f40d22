/** Shared helpers for the MaxMind DB writer tests: random bigints, address text, a brute-force model, a typed decoder. */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import ipaddr from "ipaddr.js";
import { MmdbWriter, type WriterOptions } from "../../../src/data/mmdb/writer/writer.ts";
import type { Typed } from "../../_mmdblookup.ts";

/** Random bigint in [0, 2^bits). */
export function randBig(rand: () => number, bits: number): bigint {
  let v = 0n;
  for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(Math.floor(rand() * 65536));
  return v & ((1n << BigInt(bits)) - 1n);
}

export const MAX_V4 = 0xffffffffn;
export const MAX_V6 = (1n << 128n) - 1n;
const ALIAS_LO = 0xffffn << 32n;
const ALIAS_HI = ALIAS_LO | MAX_V4;
const TEREDO_LO = 0x20010000n << 96n;
const TEREDO_HI = TEREDO_LO | ((1n << 96n) - 1n);
const SIX_TO_FOUR_LO = 0x2002n << 112n;
const SIX_TO_FOUR_HI = SIX_TO_FOUR_LO | ((1n << 112n) - 1n);

/** IPv4 text of a 32-bit value. */
export function v4(n: bigint | number): string {
  const x = Number(n);
  return [x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255].join(".");
}

/** IPv6 text (compressed, via ipaddr.js) of a 128-bit value. */
export function v6(n: bigint): string {
  const bytes: number[] = [];
  for (let i = 15; i >= 0; i--) bytes.push(Number((n >> BigInt(i * 8)) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

/** 128-bit tree key of an address text: IPv4 a.b.c.d → ::a.b.c.d (parsed independently of the writer). */
export function keyOf(ip: string): bigint {
  let k = 0n;
  for (const b of ipaddr.parse(ip).toByteArray()) k = (k << 8n) | BigInt(b);
  return k;
}

/**
 * Brute-force model of the writer's semantics: later inserts win; the part of an IPv6
 * range inside ::ffff:0:0/96 applies to IPv4 (::/96); the part inside 2001::/32
 * (Teredo) or 2002::/16 (6to4) is dropped; lookups in those three read IPv4 (the low
 * 32 bits, bits 32–63, bits 16–47).
 */
export class Model<T> {
  #segs: { lo: bigint; hi: bigint; value: T }[] = [];

  /** Records an insert of [lo, hi] (tree keys). */
  add(lo: bigint, hi: bigint, value: T): void {
    const holes: [bigint, bigint, boolean][] = [
      [ALIAS_LO, ALIAS_HI, true],
      [TEREDO_LO, TEREDO_HI, false],
      [SIX_TO_FOUR_LO, SIX_TO_FOUR_HI, false],
    ];
    let from = lo;
    for (const [a, b, mapped] of holes) {
      if (hi < a || from > b) continue;
      if (from < a) this.#segs.push({ lo: from, hi: a - 1n, value });
      if (mapped) {
        this.#segs.push({ lo: (from < a ? a : from) - a, hi: (hi > b ? b : hi) - a, value });
      }
      if (hi <= b) return;
      from = b + 1n;
    }
    this.#segs.push({ lo: from, hi, value });
  }

  /** Value at tree key `k`, or null. */
  get(k: bigint): T | null {
    const key = k >= ALIAS_LO && k <= ALIAS_HI
      ? k - ALIAS_LO
      : k >= TEREDO_LO && k <= TEREDO_HI
      ? (k >> 64n) & MAX_V4
      : k >= SIX_TO_FOUR_LO && k <= SIX_TO_FOUR_HI
      ? (k >> 80n) & MAX_V4
      : k;
    for (let i = this.#segs.length - 1; i >= 0; i--) {
      const s = this.#segs[i]!;
      if (s.lo <= key && key <= s.hi) return s.value;
    }
    return null;
  }
}

/** Builds a database with `fill` and returns its bytes. */
export function build(fill: (w: MmdbWriter) => void, options?: Partial<WriterOptions>): Uint8Array {
  const w = new MmdbWriter({ databaseType: "Test-DB", buildEpoch: 1_700_000_000, ...options });
  fill(w);
  return w.toBytes();
}

/** An mmdb-lib reader over the bytes. */
// deno-lint-ignore no-explicit-any
export function open(bytes: Uint8Array): Reader<any> {
  return new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

const MARKER = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];

/** Offset just after the last metadata marker. */
export function metadataStart(bytes: Uint8Array): number {
  outer: for (let i = bytes.length - MARKER.length; i >= 0; i--) {
    for (let j = 0; j < MARKER.length; j++) if (bytes[i + j] !== MARKER[j]) continue outer;
    return i + MARKER.length;
  }
  throw new Error("no metadata marker");
}

/** Layout of a file: tree size from its metadata, data section bounds. */
export function layout(
  bytes: Uint8Array,
): { treeSize: number; dataStart: number; dataSize: number } {
  const meta = decodeTyped(bytes, metadataStart(bytes), metadataStart(bytes)).value;
  const m = Object.fromEntries((meta.v as [string, Typed][]).map(([k, v]) => [k, v.v]));
  const treeSize = (Number(m.node_count) * Number(m.record_size)) / 4;
  const dataStart = treeSize + 16;
  return { treeSize, dataStart, dataSize: metadataStart(bytes) - MARKER.length - dataStart };
}

const TYPE_NAMES = [
  "extended",
  "pointer",
  "utf8_string",
  "double",
  "bytes",
  "uint16",
  "uint32",
  "map",
  "int32",
  "uint64",
  "uint128",
  "array",
  "container",
  "end_marker",
  "boolean",
  "float",
];

/**
 * Independent decoder that keeps types (in the form mmdblookup's dump parses to).
 * `base` is where pointers count from.
 * Counts followed pointers in `stats` and rejects pointers to pointers.
 */
export function decodeTyped(
  b: Uint8Array,
  base: number,
  at: number,
  stats = { pointers: 0 },
): { value: Typed; next: number } {
  let off = at;
  const ctrl = b[off++]!;
  let type = ctrl >> 5;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (type === 1) {
    const ss = (ctrl >> 3) & 3;
    const hi = ctrl & 7;
    let p: number;
    if (ss === 0) p = hi * 256 + b[off]!;
    else if (ss === 1) p = hi * 65536 + dv.getUint16(off) + 2048;
    else if (ss === 2) p = hi * 2 ** 24 + dv.getUint16(off) * 256 + b[off + 2]! + 526_336;
    else p = dv.getUint32(off);
    off += ss + 1;
    stats.pointers++;
    if (b[base + p]! >> 5 === 1) throw new Error(`pointer at ${at} points to a pointer`);
    return { value: decodeTyped(b, base, base + p, stats).value, next: off };
  }
  if (type === 0) type = 7 + b[off++]!;
  let size = ctrl & 31;
  if (size === 29) size = 29 + b[off++]!;
  else if (size === 30) (size = 285 + dv.getUint16(off)), (off += 2);
  else if (size === 31) (size = 65_821 + dv.getUint16(off) * 256 + b[off + 2]!), (off += 3);
  const t = TYPE_NAMES[type] ?? `type${type}`;
  const uint = () => {
    let v = 0n;
    for (let i = 0; i < size; i++) v = (v << 8n) | BigInt(b[off + i]!);
    return v;
  };
  switch (t) {
    case "utf8_string":
      return {
        value: { t, v: new TextDecoder().decode(b.subarray(off, off + size)) },
        next: off + size,
      };
    case "double":
      return { value: { t, v: dv.getFloat64(off) }, next: off + size };
    case "float":
      return { value: { t, v: dv.getFloat32(off) }, next: off + size };
    case "uint16":
    case "uint32":
      return { value: { t, v: Number(uint()) }, next: off + size };
    case "int32":
      return { value: { t, v: size === 4 ? dv.getInt32(off) : Number(uint()) }, next: off + size };
    case "uint64":
    case "uint128":
      return { value: { t, v: uint() }, next: off + size };
    case "boolean":
      return { value: { t, v: size === 1 }, next: off };
    case "map": {
      const entries: [string, Typed][] = [];
      for (let i = 0; i < size; i++) {
        const k = decodeTyped(b, base, off, stats);
        if (k.value.t !== "utf8_string") throw new Error(`map key of type ${k.value.t}`);
        const v = decodeTyped(b, base, k.next, stats);
        entries.push([k.value.v as string, v.value]);
        off = v.next;
      }
      return { value: { t, v: entries }, next: off };
    }
    case "array": {
      const items: Typed[] = [];
      for (let i = 0; i < size; i++) {
        const v = decodeTyped(b, base, off, stats);
        items.push(v.value);
        off = v.next;
      }
      return { value: { t, v: items }, next: off };
    }
  }
  throw new Error(`unexpected type ${t} at ${at}`);
}

/**
 * Walks the tree for `ip` (IPv4 as ::a.b.c.d) with its own node reader, independent of
 * mmdb-lib. Returns the record value where the walk stopped and the depth reached.
 */
export function walk(
  bytes: Uint8Array,
  ip: string,
): { record: number; depth: number; nodeCount: number } {
  const meta = typedMetadata(bytes);
  const nodeCount = Number(meta.node_count!.v);
  const size = Number(meta.record_size!.v);
  const key = keyOf(ip);
  const rd = (o: number, n: number) => {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + bytes[o + i]!;
    return v;
  };
  let node = 0;
  let depth = 0;
  for (; depth < 128 && node < nodeCount; depth++) {
    const right = ((key >> BigInt(127 - depth)) & 1n) === 1n;
    const o = (node * size) / 4;
    if (size === 24) node = right ? rd(o + 3, 3) : rd(o, 3);
    else if (size === 32) node = right ? rd(o + 4, 4) : rd(o, 4);
    else {
      const mid = bytes[o + 3]!;
      node = right ? (mid & 0x0f) * 2 ** 24 + rd(o + 4, 3) : (mid >> 4) * 2 ** 24 + rd(o, 3);
    }
  }
  return { record: node, depth, nodeCount };
}

/** Typed decode of the record for `ip` (null when not found), via `walk`. */
export function typedRecord(bytes: Uint8Array, ip: string, stats = { pointers: 0 }): Typed | null {
  const { record, nodeCount } = walk(bytes, ip);
  if (record <= nodeCount) return null;
  const { dataStart } = layout(bytes);
  return decodeTyped(bytes, dataStart, dataStart + record - nodeCount - 16, stats).value;
}

/** The typed metadata map as key → Typed. */
export function typedMetadata(bytes: Uint8Array): Record<string, Typed> {
  const start = metadataStart(bytes);
  const meta = decodeTyped(bytes, start, start).value;
  return Object.fromEntries(meta.v as [string, Typed][]);
}
