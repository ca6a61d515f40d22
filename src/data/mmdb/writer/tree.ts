/**
 * The writer's in-memory search tree: a binary trie over 128-bit keys kept in one
 * growable Int32Array (two records per node, no per-node objects), plus its
 * serialisation to the MaxMind DB tree section.
 *
 * A record holds 0 for "no data", n > 0 for child node n (node 0 is the root and is
 * never a child), or ~id < 0 for data value `id`.
 * Addresses are 4 big-endian 32-bit words; bit 0 is the most significant bit.
 */

/** Marks a node the collapse pass has not reached yet. */
const UNSEEN = -0x80000000;

function bit(a: Uint32Array, d: number): number {
  return (a[d >>> 5]! >>> (31 - (d & 31))) & 1;
}

/** Smallest t such that bits t..127 of `a` are all 0 (`inv`: all 1). */
function tailStart(a: Uint32Array, inv: boolean): number {
  for (let i = 3; i >= 0; i--) {
    const w = (inv ? ~a[i]! : a[i]!) >>> 0;
    if (w !== 0) return i * 32 + Math.clz32(w & -w) + 1;
  }
  return 0;
}

/** The layout `serialize` produced: renumbered nodes, ready to be written. */
export interface TreePlan {
  /** Nodes in the output tree. */
  nodeCount: number;
  /** Old node index of each output node, in output order (root first). */
  order: Int32Array;
  /** Output index of each kept old node. */
  index: Int32Array;
  /** Per old node: itself when kept, or the leaf it collapsed into. */
  canon: Int32Array;
}

/** Binary trie of the IPv6 space (IPv4 lives at ::/96). */
export class SearchTree {
  /** Records, two per node: left at 2n, right at 2n + 1. */
  rec = new Int32Array(2 * 1024);
  /** Nodes allocated (reachable or not); node 0 is the root. */
  count = 1;

  #alloc(fill: number): number {
    if (2 * this.count + 2 > this.rec.length) {
      const next = new Int32Array(this.rec.length * 2);
      next.set(this.rec);
      this.rec = next;
    }
    const n = this.count++;
    this.rec[2 * n] = fill;
    this.rec[2 * n + 1] = fill;
    return n;
  }

  /** Child node on `side`, created if the record is empty or data (which it then splits). */
  #child(n: number, side: number): number {
    const i = 2 * n + side;
    const r = this.rec[i]!;
    if (r > 0) return r;
    const m = this.#alloc(r);
    this.rec[i] = m;
    return m;
  }

  /**
   * Sets every address in [f, l] (f ≤ l) to `leaf`, replacing whatever was there.
   * Walks the CIDR decomposition of the range directly: down the common prefix, then
   * down f's path (covering right siblings) and l's path (covering left siblings).
   */
  insertRange(f: Uint32Array, l: Uint32Array, leaf: number): void {
    let p = 128;
    for (let i = 0; i < 4; i++) {
      const x = (f[i]! ^ l[i]!) >>> 0;
      if (x !== 0) {
        p = i * 32 + Math.clz32(x);
        break;
      }
    }
    const tzf = tailStart(f, false);
    const tol = tailStart(l, true);
    if (p >= tzf && p >= tol) {
      // Exactly one prefix: f/p.
      if (p === 0) {
        this.rec[0] = leaf;
        this.rec[1] = leaf;
        return;
      }
      let n = 0;
      for (let d = 0; d < p - 1; d++) n = this.#child(n, bit(f, d));
      this.rec[2 * n + bit(f, p - 1)] = leaf;
      return;
    }
    let top = 0;
    for (let d = 0; d < p; d++) top = this.#child(top, bit(f, d));
    // f side: [f, end of top's left subtree].
    if (p + 1 >= tzf) this.rec[2 * top] = leaf;
    else {
      let n = this.#child(top, 0);
      for (let d = p + 1;; d++) {
        const last = d + 1 >= tzf;
        if (bit(f, d) === 0) {
          this.rec[2 * n + 1] = leaf;
          if (last) {
            this.rec[2 * n] = leaf;
            break;
          }
          n = this.#child(n, 0);
        } else {
          if (last) {
            this.rec[2 * n + 1] = leaf;
            break;
          }
          n = this.#child(n, 1);
        }
      }
    }
    // l side: [start of top's right subtree, l].
    if (p + 1 >= tol) this.rec[2 * top + 1] = leaf;
    else {
      let n = this.#child(top, 1);
      for (let d = p + 1;; d++) {
        const last = d + 1 >= tol;
        if (bit(l, d) === 1) {
          this.rec[2 * n] = leaf;
          if (last) {
            this.rec[2 * n + 1] = leaf;
            break;
          }
          n = this.#child(n, 1);
        } else {
          if (last) {
            this.rec[2 * n] = leaf;
            break;
          }
          n = this.#child(n, 0);
        }
      }
    }
  }

  /**
   * Points the record for `alias`/`prefixLength` at whatever ::/96 (the IPv4 space) holds: the same
   * node when it is a subtree, so both paths share it. Splitting leaves on the way is
   * harmless: it changes no lookup, and `plan` collapses such nodes again.
   */
  linkAlias(alias: Uint32Array, prefixLength: number): void {
    let target = 0;
    let n = 0;
    for (let d = 0; d < 96; d++) {
      target = this.rec[2 * n]!;
      if (target <= 0) break;
      n = target;
    }
    n = 0;
    for (let d = 0; d < prefixLength - 1; d++) n = this.#child(n, bit(alias, d));
    this.rec[2 * n + bit(alias, prefixLength - 1)] = target;
  }

  /**
   * Prepares serialisation: collapses nodes whose two records hold the same leaf
   * (bottom-up, so whole uniform subtrees disappear), drops unreachable nodes, and
   * numbers the rest depth-first from the root. `onLeaf` sees each data leaf in
   * output order (so the caller can write data values in tree order).
   */
  plan(onLeaf: (id: number) => void): TreePlan {
    const rec = this.rec;
    const canon = new Int32Array(this.count).fill(UNSEEN);
    const resolve = (r: number) => (r > 0 ? canon[r]! : r);
    // Post-order, iterative; depth ≤ 128 so the stack is small.
    const stack = new Int32Array(520);
    const state = new Uint8Array(520);
    let sp = 0;
    stack[0] = 0;
    state[0] = 0;
    sp = 1;
    while (sp > 0) {
      const n = stack[sp - 1]!;
      const st = state[sp - 1]!;
      if (st < 2) {
        state[sp - 1] = st + 1;
        const r = rec[2 * n + st]!;
        if (r > 0 && canon[r] === UNSEEN) {
          stack[sp] = r;
          state[sp] = 0;
          sp++;
        }
        continue;
      }
      sp--;
      const a = resolve(rec[2 * n]!);
      const b = resolve(rec[2 * n + 1]!);
      canon[n] = n !== 0 && a <= 0 && a === b ? a : n;
    }
    // Pre-order numbering of kept nodes.
    const index = new Int32Array(this.count).fill(-1);
    const order = new Int32Array(this.count);
    let nodeCount = 0;
    sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
      const n = stack[--sp]!;
      if (index[n] !== -1) continue;
      index[n] = nodeCount;
      order[nodeCount++] = n;
      const a = resolve(rec[2 * n]!);
      const b = resolve(rec[2 * n + 1]!);
      if (a < 0) onLeaf(~a);
      if (b < 0) onLeaf(~b);
      // Push right first so the left subtree is numbered first.
      if (b > 0 && index[b] === -1) stack[sp++] = b;
      if (a > 0 && index[a] === -1) stack[sp++] = a;
    }
    return { nodeCount, order: order.subarray(0, nodeCount), index, canon };
  }

  /**
   * Writes the tree section into `out` (from byte 0). `dataRecord(id)` gives the
   * record value for data value `id`; "no data" is `nodeCount`.
   */
  write(
    plan: TreePlan,
    recordSize: 24 | 28 | 32,
    out: Uint8Array,
    dataRecord: (id: number) => number,
  ): void {
    const { nodeCount, order, index, canon } = plan;
    const rec = this.rec;
    const value = (r: number): number => {
      const c = r > 0 ? canon[r]! : r;
      return c > 0 ? index[c]! : c === 0 ? nodeCount : dataRecord(~c);
    };
    const bytes = recordSize / 4;
    for (let i = 0; i < nodeCount; i++) {
      const n = order[i]!;
      writeNode(out, i * bytes, recordSize, value(rec[2 * n]!), value(rec[2 * n + 1]!));
    }
  }
}

/** Writes one node's two records (`a` left, `b` right) at byte `o` of a tree section. */
export function writeNode(
  out: Uint8Array,
  o: number,
  recordSize: 24 | 28 | 32,
  a: number,
  b: number,
): void {
  if (recordSize === 24) {
    out[o] = a >>> 16;
    out[o + 1] = a >>> 8;
    out[o + 2] = a;
    out[o + 3] = b >>> 16;
    out[o + 4] = b >>> 8;
    out[o + 5] = b;
  } else if (recordSize === 28) {
    // The middle byte holds bits 27..24 of the left record, then of the right.
    out[o] = a >>> 16;
    out[o + 1] = a >>> 8;
    out[o + 2] = a;
    out[o + 3] = ((a >>> 20) & 0xf0) | ((b >>> 24) & 0x0f);
    out[o + 4] = b >>> 16;
    out[o + 5] = b >>> 8;
    out[o + 6] = b;
  } else {
    out[o] = a >>> 24;
    out[o + 1] = a >>> 16;
    out[o + 2] = a >>> 8;
    out[o + 3] = a;
    out[o + 4] = b >>> 24;
    out[o + 5] = b >>> 16;
    out[o + 6] = b >>> 8;
    out[o + 7] = b;
  }
}
