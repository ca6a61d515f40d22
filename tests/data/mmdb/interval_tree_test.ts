/**
 * The streamed tree writer (interval_tree.ts) against the trie writer
 * (MmdbWriter) on random intervals over the whole IPv6 space: the same
 * answers and prefix lengths everywhere, and the same node count (both make
 * the smallest tree). The data section goes through 7-byte chunks, so values
 * straddle chunk boundaries.
 */

import assert from "node:assert/strict";
import { openMmdb } from "../../../src/data/mmdb/reader.ts";
import { ChunkedByteWriter, writeString } from "../../../src/data/mmdb/writer/encode.ts";
import { writeIntervalTree } from "../../../src/data/mmdb/writer/interval_tree.ts";
import { MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import { formatIpv6 } from "../../../src/base/ip/parse.ts";
import { seededRandom } from "../../_random.ts";

const MAX = (1n << 128n) - 1n;
const MAPPED_FIRST = 0xffffn << 32n;
const MAPPED_LAST = MAPPED_FIRST + 0xffffffffn;

function text(key: bigint): string {
  const bytes = new Uint8Array(16);
  for (let i = 15, k = key; i >= 0; i--, k >>= 8n) bytes[i] = Number(k & 0xffn);
  return formatIpv6(bytes);
}

function words(key: bigint): Uint32Array {
  return Uint32Array.from([96n, 64n, 32n, 0n], (shift) => Number((key >> shift) & 0xffffffffn));
}

/** Places intervals start and end near: the IPv4 space, the aliases, the ends of the space. */
const BASES = [
  0n,
  0x0a000000n,
  0xffffffffn,
  1n << 32n,
  0x20010000n << 96n,
  (0x20010001n << 96n) - 1n,
  0x20020000n << 96n,
  0x20030000n << 96n,
  0x24000000n << 96n,
  MAX - 0xffffn,
];

Deno.test("writeIntervalTree answers as MmdbWriter does, with as few nodes, on random intervals", () => {
  const random = seededRandom(7);
  for (let round = 0; round < 30; round++) {
    const points = new Set<bigint>();
    for (let i = 0; i < 2 + Math.floor(random() * 40); i++) {
      const base = BASES[Math.floor(random() * BASES.length)]!;
      const step = BigInt(Math.floor(random() * 2 ** (random() < 0.5 ? 8 : 30)));
      const point = base + step > MAX ? MAX : base + step;
      points.add(point);
    }
    const sorted = [...points].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const intervals: [bigint, bigint, string][] = [];
    for (let i = 0; i + 1 < sorted.length; i += 2) {
      const [lo, hi] = [sorted[i]!, sorted[i + 1]!];
      // MmdbWriter moves what it is given inside ::ffff:0:0/96 onto IPv4: not compared here.
      if (hi >= MAPPED_FIRST && lo <= MAPPED_LAST) continue;
      intervals.push([lo, hi, `v${Math.floor(random() * 4)}`]);
    }
    const data = new ChunkedByteWriter(7);
    const offsets = new Map<string, number>();
    for (const value of ["v0", "v1", "v2", "v3"]) {
      offsets.set(value, data.offset);
      writeString(data, `${value} `.repeat(5));
    }
    // The same values in both (padded: each straddles chunks).
    const padded = new MmdbWriter({ databaseType: "t", buildEpoch: 1 });
    for (const [lo, hi, value] of intervals) {
      padded.insertRange(text(lo), text(hi), `${value} `.repeat(5));
    }
    const streamed = writeIntervalTree(
      (emit) => {
        for (const [lo, hi, value] of intervals) emit(words(lo), words(hi), offsets.get(value)!);
      },
      () => data.chunks(),
      { databaseType: "t", buildEpoch: 1 },
    );
    const expected = openMmdb<string>(padded.toBytes());
    const actual = openMmdb<string>(streamed);
    const probes = new Set<bigint>([0n, MAX, MAPPED_FIRST + 0x0a000001n, 0x20020a000001n << 80n]);
    for (const [lo, hi] of intervals) {
      for (const p of [lo - 1n, lo, (lo + hi) / 2n, hi, hi + 1n]) {
        if (p >= 0n && p <= MAX) probes.add(p);
      }
    }
    for (const p of probes) {
      const ip = text(p);
      assert.deepEqual(
        actual.getWithPrefixLength(ip),
        expected.getWithPrefixLength(ip),
        `round ${round}, ${ip}`,
      );
    }
    assert.equal(actual.metadata.nodeCount, expected.metadata.nodeCount, `round ${round}`);
  }
});

Deno.test("ChunkedByteWriter: offsets run across chunks, and the chunks join into the stream", () => {
  const w = new ChunkedByteWriter(4);
  const at: number[] = [];
  for (const s of ["a", "hello world", "é-accent", "xy"]) {
    at.push(w.offset);
    writeString(w, s);
  }
  const joined = new Uint8Array(w.chunks().flatMap((chunk) => [...chunk]));
  assert.equal(joined.length, 2 + 12 + 10 + 3);
  assert.deepEqual(at, [0, 2, 14, 24]);
  assert.equal(new TextDecoder().decode(joined.subarray(15, 24)), "é-accent");
  assert.equal(w.offset, 0, "empty once handed over");
});
