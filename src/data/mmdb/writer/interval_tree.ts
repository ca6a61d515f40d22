/**
 * Writes a MaxMind DB from sorted, disjoint address intervals whose data is
 * already encoded, without building the search tree in memory: the tree is
 * streamed out in post-order (children before parents), so the state is one
 * record per tree level, and the output buffer is allocated once at its exact
 * size. Used where the input can be millions of networks (compiled feeds):
 * a node-per-bit trie would cost tens of bytes per tree node.
 *
 * Two passes over the intervals: the first counts the nodes (which fixes
 * the record values, `node_count + 16 + offset`), the second writes them.
 * The tree is the smallest one for the intervals: adjacent intervals with the
 * same data merge, and each run is cut into its largest aligned blocks, so no
 * node has two equal leaves. The IPv4 subtree (::/96) and its three aliases
 * are laid out as `MmdbWriter` lays them out (writer.ts): the part of an
 * interval inside an alias is dropped, the alias points at ::/96.
 */

import { ALIASES, METADATA_MARKER, metadataSection, pickRecordSize } from "./writer.ts";
import type { WriterOptions } from "./writer.ts";
import { writeNode } from "./tree.ts";
import { cidrBlocks, compare, decrement, increment, MAX } from "./key_math.ts";

/**
 * Calls `emit` for each interval, in address order, disjoint: `lo`..`hi`
 * (4 big-endian words each, IPv4 at ::/96, read before the next call) and the
 * offset of its data in the data section. Called twice, with the same intervals.
 */
export type IntervalSource = (
  emit: (lo: Uint32Array, hi: Uint32Array, offset: number) => void,
) => void;

/**
 * Builds the database: tree section, separator, data section, metadata.
 * `dataSection` is asked for after the first pass (which may be what writes
 * the data): its chunks, in order, copied into the output before the second
 * pass so the caller's copy can go.
 */
export function writeIntervalTree(
  source: IntervalSource,
  dataSection: () => Uint8Array[],
  options: WriterOptions & { maxBytes?: number },
): Uint8Array {
  const counted = new TreeStream(null, 0, 24);
  walkRuns(source, counted);
  const nodeCount = counted.nodes;
  const chunks = dataSection();
  const dataSize = chunks.reduce((n, chunk) => n + chunk.length, 0);
  const recordSize = options.recordSize ?? pickRecordSize(nodeCount, dataSize);
  const size = (nodeCount * recordSize) / 4 + dataSize;
  if (options.maxBytes !== undefined && size > options.maxBytes) {
    // Refused before the output is allocated: the count took no memory.
    throw new Error(
      `the database would take ${mb(size)} MB (${nodeCount} tree nodes, ${
        mb(dataSize)
      } MB of data), more than ${mb(options.maxBytes)} MB`,
    );
  }
  const meta = metadataSection(
    {
      databaseType: options.databaseType,
      languages: options.languages ?? [],
      description: options.description ?? { en: options.databaseType },
      buildEpoch: options.buildEpoch ?? Math.floor(Date.now() / 1000),
    },
    nodeCount,
    recordSize,
  );
  const treeSize = (nodeCount * recordSize) / 4;
  const out = new Uint8Array(treeSize + 16 + dataSize + METADATA_MARKER.length + meta.length);
  let at = treeSize + 16;
  for (const chunk of chunks.splice(0)) {
    out.set(chunk, at);
    at += chunk.length;
  }
  out.set(METADATA_MARKER, at);
  out.set(meta, at + METADATA_MARKER.length);
  const written = new TreeStream(out, nodeCount, recordSize);
  walkRuns(source, written);
  if (written.nodes !== nodeCount) {
    throw new Error("writeIntervalTree: the intervals changed between the two passes");
  }
  return out;
}

function mb(bytes: number): string {
  return (bytes / 1_000_000).toFixed(0);
}

/** The last IPv4 address in the tree, ::255.255.255.255. */
const IPV4_LAST = new Uint32Array([0, 0, 0, 0xffffffff]);

/** 2^n for n = 0..32. */
const POW2 = Float64Array.from({ length: 33 }, (_, n) => 2 ** n);

/** Run values besides data offsets. */
const EMPTY = -1;
const ALIAS = -2;

/**
 * Receives aligned blocks (leaves) in address order and emits each node once
 * both its records are known. Post-order numbers count up from 0; a node's
 * output index is `nodeCount - 1 - post`, so the root (completed last) is 0.
 */
class TreeStream {
  /** Nodes completed so far. */
  nodes = 0;
  /** The left record of the open node at each depth. */
  readonly #left = new Float64Array(128);
  /** The record the aliases point at: the ::/96 node, or the leaf covering it. */
  #ipv4 = 0;
  readonly #bytes: number;

  constructor(
    readonly out: Uint8Array | null,
    readonly nodeCount: number,
    readonly recordSize: 24 | 28 | 32,
  ) {
    this.#bytes = recordSize / 4;
  }

  /** The block of `length` prefix bits at `start` holds `value` (an offset, EMPTY or ALIAS). */
  leaf(start: Uint32Array, length: number, value: number): void {
    let record = value >= 0
      ? this.nodeCount + 16 + value
      : value === EMPTY
      ? this.nodeCount
      : this.#ipv4;
    if (length <= 96 && start[0] === 0 && start[1] === 0 && start[2] === 0 && start[3] === 0) {
      this.#ipv4 = record;
    }
    // Nodes above the block that had only their left side are complete once it is their right.
    for (let d = length - 1;; d--) {
      if (((start[d >>> 5]! >>> (31 - (d & 31))) & 1) === 0) {
        this.#left[d] = record;
        return;
      }
      const index = this.nodeCount - 1 - this.nodes++;
      if (this.out) {
        writeNode(this.out, index * this.#bytes, this.recordSize, this.#left[d]!, record);
      }
      record = index;
      if (d === 96 && start[0] === 0 && start[1] === 0 && start[2] === 0) this.#ipv4 = index;
      if (d === 0) return;
    }
  }
}

/** Feeds the whole address space, as maximal runs cut into aligned blocks, to `tree`. */
function walkRuns(source: IntervalSource, tree: TreeStream): void {
  const runs = new Runs(tree);
  source((lo, hi, offset) => runs.add(lo, hi, offset));
  runs.finish();
}

/**
 * Turns intervals into runs covering the whole space: gaps become EMPTY runs,
 * each alias its own ALIAS run (what an interval has inside it is dropped),
 * neighbours with the same value one run.
 */
class Runs {
  /** The first address no run covers yet; null once the whole space is covered. */
  #cursor: Uint32Array | null = new Uint32Array(4);
  #alias = 0;
  readonly #lo = new Uint32Array(4);
  readonly #hi = new Uint32Array(4);
  readonly #gapEnd = new Uint32Array(4);
  #value = 0;
  #pending = false;
  readonly #block = new Uint32Array(4);

  constructor(readonly tree: TreeStream) {}

  add(lo: Uint32Array, hi: Uint32Array, value: number): void {
    let cursor = this.#cursor;
    if (cursor === null || compare(hi, cursor) < 0) return; // inside an alias already passed
    if (compare(lo, cursor) > 0) {
      this.#gapEnd.set(lo);
      decrement(this.#gapEnd);
      this.#fill(cursor, this.#gapEnd, EMPTY);
      // The gap may have ended inside an alias that reaches into the interval.
      cursor = this.#cursor;
      if (cursor === null || compare(hi, cursor) < 0) return;
    }
    this.#fill(compare(lo, cursor) > 0 ? lo : cursor, hi, value);
  }

  finish(): void {
    if (this.#cursor !== null) this.#fill(this.#cursor, MAX, EMPTY);
    this.#flush();
  }

  /** lo..hi (lo is the cursor or after it) with `value`, aliases cut out; moves the cursor past it. */
  #fill(lo: Uint32Array, hi: Uint32Array, value: number): void {
    let from = lo;
    for (;;) {
      const alias = ALIASES[this.#alias];
      if (!alias || compare(hi, alias.first) < 0) {
        this.#run(from, hi, value);
        this.#advance(hi);
        return;
      }
      if (compare(from, alias.first) < 0) this.#run(from, alias.before, value);
      this.#run(alias.first, alias.last, ALIAS);
      this.#alias++;
      if (compare(hi, alias.last) <= 0) {
        this.#advance(alias.last);
        return;
      }
      from = alias.after;
    }
  }

  #advance(last: Uint32Array): void {
    const cursor = this.#cursor!;
    cursor.set(last);
    if (!increment(cursor)) this.#cursor = null;
  }

  #run(lo: Uint32Array, hi: Uint32Array, value: number): void {
    // An alias of a uniform IPv4 space is that space's value, and merges like any run.
    if (value === ALIAS && this.#ipv4 !== null) value = this.#ipv4;
    if (this.#pending && value === this.#value && value !== ALIAS) {
      this.#hi.set(hi);
      return;
    }
    this.#flush();
    this.#lo.set(lo);
    this.#hi.set(hi);
    this.#value = value;
    this.#pending = true;
  }

  /** The value of the whole IPv4 space (::/96) when one run covers it; null when it is split. */
  get #ipv4(): number | null {
    const lo = this.#pending ? this.#lo : null;
    if (lo && lo[0] === 0 && lo[1] === 0 && lo[2] === 0 && lo[3] === 0) {
      return compare(this.#hi, IPV4_LAST) >= 0 ? this.#value : null;
    }
    return this.#ipv4Flushed;
  }

  /** What #ipv4 is once the run holding address 0 has been cut into blocks. */
  #ipv4Flushed: number | null = null;

  /** Cuts the pending run into its largest aligned blocks, in order. */
  #flush(): void {
    if (!this.#pending) return;
    this.#pending = false;
    const lo = this.#lo, hi = this.#hi, value = this.#value, block = this.#block;
    if (lo[0] === 0 && lo[1] === 0 && lo[2] === 0 && lo[3] === 0) {
      this.#ipv4Flushed = compare(hi, IPV4_LAST) >= 0 ? value : null;
    }
    if (lo[0] === hi[0] && lo[1] === hi[1] && lo[2] === hi[2]) {
      // Within one /96 (all of IPv4): plain numbers on the last word.
      block[0] = lo[0]!;
      block[1] = lo[1]!;
      block[2] = lo[2]!;
      const end = hi[3]!;
      for (let x = lo[3]!; x <= end;) {
        // Aligned at x, and no longer than what is left (2^32 left only when x is 0).
        const aligned = x === 0 ? 32 : 31 - Math.clz32(x & -x);
        const left = end - x + 1;
        const bits = Math.min(aligned, left === 2 ** 32 ? 32 : 31 - Math.clz32(left));
        block[3] = x;
        this.tree.leaf(block, 128 - bits, value);
        x += POW2[bits]!;
      }
      return;
    }
    cidrBlocks(lo, hi, (start, length) => this.tree.leaf(start, length, value));
  }
}
