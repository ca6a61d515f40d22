/** Address blocks as the ASN view keeps them: sizes, collapsing and text. */

import { formatIpv6 } from "../../base/ip/parse.ts";
import type { Block } from "./tree_networks.ts";

/** A copy of a walk's block (the walk reuses its words). */
export function copyBlock(family: 4 | 6, words: Uint32Array, length: number): Block {
  return { family, words: words.slice(0, family === 4 ? 1 : 4), length };
}

/** The addresses of an IPv4 block. */
export function ipv4Size(length: number): number {
  return 2 ** (32 - length);
}

/**
 * Counts IPv6 space in /64s: a block of /64 or larger is 2^(64 - length) of
 * them; smaller blocks count the /64s they touch, once each (blocks in address order).
 */
export function createSlash64Counter(): { add(block: Block): void; readonly total: number } {
  let total = 0;
  let lastHi = -1;
  let lastLo = -1;
  return {
    add(block) {
      if (block.length <= 64) {
        total += 2 ** (64 - block.length);
        lastHi = -1;
        return;
      }
      const hi = block.words[0]!;
      const lo = block.words[1]!;
      if (hi === lastHi && lo === lastLo) return;
      lastHi = hi;
      lastLo = lo;
      total += 1;
    },
    get total() {
      return total;
    },
  };
}

/** Bit `depth` (0 = most significant) of a block's address. */
function bitAt(words: Uint32Array, depth: number): number {
  return (words[depth >>> 5]! >>> (31 - (depth & 31))) & 1;
}

/** Whether `a` and `b` are the two halves of one block, `a` the lower. */
function siblings(a: Block, b: Block): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  const last = a.length - 1;
  if (bitAt(a.words, last) !== 0 || bitAt(b.words, last) !== 1) return false;
  for (let i = 0; i < a.words.length; i++) {
    let x = a.words[i]! ^ b.words[i]!;
    if (i === last >>> 5) x &= ~(1 << (31 - (last & 31)));
    if (x !== 0) return false;
  }
  return true;
}

/**
 * The fewest blocks covering the same addresses: disjoint blocks in address
 * order, halves of one block merged into it (repeatedly).
 *
 * @example collapse([10.0.0.0/25, 10.0.0.128/25, 10.0.1.0/24]) // [10.0.0.0/23]
 */
export function collapse(blocks: readonly Block[]): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    out.push(block);
    while (out.length >= 2 && siblings(out[out.length - 2]!, out[out.length - 1]!)) {
      const lower = out[out.length - 2]!;
      out.length -= 2;
      out.push({ family: lower.family, words: lower.words, length: lower.length - 1 });
    }
  }
  return out;
}

/** The address bytes of a block (4 or 16, network order). */
export function blockBytes(block: Block): Uint8Array {
  const bytes = new Uint8Array(block.family === 4 ? 4 : 16);
  for (let i = 0; i < bytes.length; i++) bytes[i] = block.words[i >>> 2]! >>> (24 - 8 * (i & 3));
  return bytes;
}

/** CIDR text: `8.8.8.0/24`, `2001:4860::/32`. */
export function formatBlock(block: Block): string {
  const bytes = blockBytes(block);
  const address = block.family === 4 ? bytes.join(".") : formatIpv6(bytes);
  return `${address}/${block.length}`;
}
