/**
 * Walks a MaxMind DB search tree on address bytes (4 or 16), straight over the
 * file's bytes. mmdb-lib's own walk re-parses the address text and reads every
 * node through Buffer methods; this one does neither, and jumps over the first
 * 16 levels with a table built at open time.
 */

/** The record a walk ends on: `0` when the tree has no data for the address. */
export type TreeWalk = (address: Uint8Array) => number;

interface TreeShape {
  nodeCount: number;
  recordSize: number;
  ipVersion: number;
}

/**
 * Returns a walker over `db`. The result is the record value the walk ends on
 * (greater than nodeCount: a data pointer), or 0 when the address has no data.
 */
export function createTreeWalk(db: Uint8Array, shape: TreeShape): TreeWalk {
  const { nodeCount, recordSize } = shape;
  const child = nodeReader(db, recordSize);

  /** IPv4 lives under ::/96 in an IPv6 tree: its start is 96 left turns from the root. */
  let ipv4Root = 0;
  if (shape.ipVersion === 6) {
    for (let i = 0; i < 96 && ipv4Root < nodeCount; i++) ipv4Root = child(ipv4Root, 0);
  }

  /**
   * The node (or record) reached after the first 16 bits, for each 16-bit
   * prefix: the top 16 levels walked once each (at most 131,071 node reads,
   * not 65,536 walks of 16 reads; a reload builds these tables on the
   * serving isolate), a record above depth 16 filling its whole range.
   */
  const prefixTable = (root: number): Uint32Array => {
    const table = new Uint32Array(65536);
    const fill = (node: number, depth: number, prefix: number): void => {
      if (depth === 16 || node >= nodeCount) {
        const span = 1 << (16 - depth);
        table.fill(node, prefix * span, (prefix + 1) * span);
        return;
      }
      fill(child(node, 0), depth + 1, prefix * 2);
      fill(child(node, 1), depth + 1, prefix * 2 + 1);
    };
    fill(root, 0, 0);
    return table;
  };
  const v4Table = prefixTable(ipv4Root);
  const v6Table = shape.ipVersion === 6 ? prefixTable(0) : null;

  const walk = (table: Uint32Array, address: Uint8Array, from: number, bits: number): number => {
    let node = table[(address[from]! << 8) | address[from + 1]!]!;
    for (let depth = 16; depth < bits && node < nodeCount; depth++) {
      node = child(node, (address[from + (depth >> 3)]! >> (7 - (depth & 7))) & 1);
    }
    return node > nodeCount ? node : 0;
  };

  return (address) => {
    if (address.length === 4) return walk(v4Table, address, 0, 32);
    // IPv6 transition ranges answer for the IPv4 address they embed, whatever the file
    // holds there (docs/decisions.md, "IPv6 transition ranges").
    if (address[0] === 0x20) {
      if (address[1] === 0x02) return walk(v4Table, address, 2, 32); // 6to4 2002:AABB:CCDD::/48
      if (address[1] === 0x01 && address[2] === 0 && address[3] === 0) {
        return walk(v4Table, address, 4, 32); // Teredo 2001:0:SSSS:SSSS:: → the server SSSS:SSSS
      }
    }
    return v6Table ? walk(v6Table, address, 0, 128) : 0; // no IPv6 in an IPv4-only database
  };
}

/**
 * Returns a function giving the prefix length of the network a walk for an
 * address ends in (`8.8.8.8` → 24 for `8.8.8.0/24`), in the address's own
 * terms: IPv4 bits for IPv4, and for 6to4 / Teredo addresses (read as the IPv4
 * address they embed, as {@link createTreeWalk} does) 16 / 32 plus the IPv4 bits.
 * A plain bit-by-bit walk: for the compatible APIs' `network`, not the hot path.
 */
export function createPrefixLength(
  db: Uint8Array,
  shape: TreeShape,
): (address: Uint8Array) => number {
  const { nodeCount } = shape;
  const child = nodeReader(db, shape.recordSize);
  const depth = (address: Uint8Array, bits: number): number => {
    let node = 0;
    let d = 0;
    for (; d < bits && node < nodeCount; d++) {
      node = child(node, (address[d >> 3]! >> (7 - (d & 7))) & 1);
    }
    return d;
  };
  const ipv4 = (v4: Uint8Array): number => {
    if (shape.ipVersion !== 6) return depth(v4, 32);
    const mapped = new Uint8Array(16); // IPv4 lives under ::/96 in an IPv6 tree
    mapped.set(v4, 12);
    return Math.max(0, depth(mapped, 128) - 96);
  };
  return (address) => {
    if (address.length === 4) return ipv4(address);
    if (address[0] === 0x20 && address[1] === 0x02) return 16 + ipv4(address.subarray(2, 6));
    if (address[0] === 0x20 && address[1] === 0x01 && address[2] === 0 && address[3] === 0) {
      return 32 + ipv4(address.subarray(4, 8));
    }
    return shape.ipVersion === 6 ? depth(address, 128) : 0;
  };
}

/** Reads record `bit` (0 left, 1 right) of a node; throws for a record size the format lacks. */
export function nodeReader(
  db: Uint8Array,
  recordSize: number,
): (node: number, bit: number) => number {
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) {
    throw new Error(`Unsupported record size ${recordSize}: expected 24, 28 or 32`);
  }
  const nodeBytes = recordSize / 4;
  return (node, bit) => {
    const o = node * nodeBytes;
    if (recordSize === 24) {
      const q = o + bit * 3;
      return (db[q]! << 16) | (db[q + 1]! << 8) | db[q + 2]!;
    }
    if (recordSize === 28) {
      return bit === 0
        ? ((db[o + 3]! & 0xf0) << 20) | (db[o]! << 16) | (db[o + 1]! << 8) | db[o + 2]!
        : ((db[o + 3]! & 0x0f) << 24) | (db[o + 4]! << 16) | (db[o + 5]! << 8) | db[o + 6]!;
    }
    const q = o + bit * 4;
    return ((db[q]! << 24) | (db[q + 1]! << 16) | (db[q + 2]! << 8) | db[q + 3]!) >>> 0;
  };
}
