/**
 * Hand-made MaxMind DB files for what our own writer never produces: IPv4-only trees,
 * IPv6 trees without the transition aliases, data sections with arbitrary (even
 * corrupt) bytes. The tree is a plain binary trie; every record size is 32 bits.
 */

import { parseIp } from "../../../src/base/ip/parse.ts";
import {
  ByteWriter,
  writeArrayHeader,
  writeMapHeader,
  writeString,
  writeUint16,
  writeUint32,
  writeUint64,
} from "../../../src/data/mmdb/writer/encode.ts";

export interface RawNetwork {
  /** "1.2.3.0/24" (under ::/96 in an IPv6 tree) or an IPv6 network. */
  network: string;
  /** Offset of the record in `data`. */
  offset: number;
}

/** A MaxMind DB file with the given networks pointing into `data` (raw data-section bytes). */
export function rawMmdb(
  options: { ipVersion: 4 | 6; networks: RawNetwork[]; data: Uint8Array; databaseType?: string },
): Uint8Array {
  const bits = options.ipVersion === 4 ? 32 : 128;
  // Records: >= 0 a node, < 0 data at offset ~r, null no data.
  const nodes: [number | null, number | null][] = [[null, null]];
  for (const { network, offset } of options.networks) {
    const [text, len = ""] = network.split("/");
    const ip = parseIp(text!);
    const prefix = ip.version === 4 && bits === 128 ? Number(len || 32) + 96 : Number(len || bits);
    const key = new Uint8Array(16);
    key.set(ip.bytes, ip.version === 4 && bits === 128 ? 12 : 0);
    let n = 0;
    for (let d = 0; d < prefix; d++) {
      const bit = (key[d >> 3]! >> (7 - (d & 7))) & 1;
      if (d === prefix - 1) {
        nodes[n]![bit] = ~offset;
        break;
      }
      let next: number | null = nodes[n]![bit]!;
      if (next === null || next < 0) {
        next = nodes.push([null, null]) - 1;
        nodes[n]![bit] = next;
      }
      n = next;
    }
  }
  const count = nodes.length;
  const tree = new ByteWriter(count * 8);
  for (const pair of nodes) {
    for (const r of pair) tree.uintBE(r === null ? count : r >= 0 ? r : count + 16 + ~r, 4);
  }
  const meta = new ByteWriter(512);
  writeMapHeader(meta, 9);
  writeString(meta, "binary_format_major_version");
  writeUint16(meta, 2);
  writeString(meta, "binary_format_minor_version");
  writeUint16(meta, 0);
  writeString(meta, "build_epoch");
  writeUint64(meta, 1_700_000_000n);
  writeString(meta, "database_type");
  writeString(meta, options.databaseType ?? "Raw-Test");
  writeString(meta, "description");
  writeMapHeader(meta, 0);
  writeString(meta, "ip_version");
  writeUint16(meta, options.ipVersion);
  writeString(meta, "languages");
  writeArrayHeader(meta, 0);
  writeString(meta, "node_count");
  writeUint32(meta, count);
  writeString(meta, "record_size");
  writeUint16(meta, 32);
  const marker = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];
  return new Uint8Array([
    ...tree.buf.subarray(0, tree.len),
    ...new Uint8Array(16),
    ...options.data,
    ...marker,
    ...meta.buf.subarray(0, meta.len),
  ]);
}

/** Data-section bytes of one map `{ name: <string> }` (for tests that need a valid record). */
export function mapRecord(name: string): Uint8Array {
  const w = new ByteWriter(64);
  writeMapHeader(w, 1);
  writeString(w, "name");
  writeString(w, name);
  return w.buf.slice(0, w.len);
}
