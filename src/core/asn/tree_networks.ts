/**
 * Lists the networks of a MaxMind DB search tree inside a block, in address
 * order: what a lookup walks one address at a time, read whole (the ASN
 * index, the list counts of an AS). Over the file's bytes, like src/data/mmdb/tree.ts.
 */

import { nodeReader } from "../../data/mmdb/tree.ts";

/** What the walk needs of a database's metadata. */
export interface TreeShape {
  nodeCount: number;
  recordSize: number;
  ipVersion: number;
}

/**
 * A block of addresses: `words` holds the address (IPv4: `words[0]`; IPv6: four
 * words, most significant first), `length` its prefix length.
 */
export interface Block {
  readonly family: 4 | 6;
  readonly words: Uint32Array;
  readonly length: number;
}

/**
 * Called for each network holding data: `words` and `length` as in {@link Block}
 * (the array is reused: copy what you keep), `record` the tree's data pointer
 * (equal for networks sharing one record).
 */
export type OnNetwork = (words: Uint32Array, length: number, record: number) => void;

/** Walks a tree's networks inside a block. */
export interface TreeNetworks {
  /**
   * The networks with data inside `block`, in address order; one larger than
   * it is reported as `block` itself. IPv6 leaves out the IPv4 space (::/96)
   * and the ranges a tree aliases to it (IPv4-mapped, 6to4, Teredo): they are
   * the IPv4 networks again.
   */
  within(block: Block, onNetwork: OnNetwork): void;
}

/** Reads the networks of the tree in `bytes` (a whole MaxMind DB file). */
export function createTreeNetworks(bytes: Uint8Array, shape: TreeShape): TreeNetworks {
  const { nodeCount } = shape;
  const child = nodeReader(bytes, shape.recordSize);
  /** The IPv4 space's node: ::/96 in an IPv6 tree (96 left turns), the root in an IPv4 one. */
  let ipv4Root = 0;
  if (shape.ipVersion === 6) {
    for (let i = 0; i < 96 && ipv4Root < nodeCount; i++) ipv4Root = child(ipv4Root, 0);
  }
  const v4Words = new Uint32Array(1);
  const v6Words = new Uint32Array(4);

  /** Depth-first, left before right: address order. `skip` prunes a subtree (IPv4 inside IPv6). */
  const visit = (
    node: number,
    depth: number,
    words: Uint32Array,
    onNetwork: OnNetwork,
    skip: number,
  ): void => {
    if (node >= nodeCount) {
      if (node > nodeCount) onNetwork(words, depth, node);
      return;
    }
    if (node === skip && depth > 0) return;
    const word = depth >>> 5;
    const bit = 1 << (31 - (depth & 31));
    visit(child(node, 0), depth + 1, words, onNetwork, skip);
    words[word]! |= bit;
    visit(child(node, 1), depth + 1, words, onNetwork, skip);
    words[word]! &= ~bit;
  };

  const skip6 = ipv4Root < nodeCount ? ipv4Root : -1;
  return {
    within(block, onNetwork) {
      if (block.family === 6 && shape.ipVersion !== 6) return;
      const words = block.family === 4 ? v4Words : v6Words;
      words.set(block.words.subarray(0, words.length));
      let node = block.family === 4 ? ipv4Root : 0;
      for (let d = 0; d < block.length && node < nodeCount; d++) {
        node = child(node, (words[d >>> 5]! >>> (31 - (d & 31))) & 1);
        if (block.family === 6 && node === skip6) return; // inside the IPv4 space or an alias
      }
      if (node >= nodeCount) {
        if (node > nodeCount) onNetwork(words, block.length, node);
        return;
      }
      visit(node, block.length, words, onNetwork, block.family === 6 ? skip6 : -1);
    },
  };
}
