/**
 * Arithmetic on the writer's 128-bit keys (4 big-endian 32-bit words, see
 * key.ts), and the cut of an address range into its CIDR blocks.
 */

const ONES = 0xffffffff;

/** The last address, ffff:…:ffff. */
export const MAX: Readonly<Uint32Array> = new Uint32Array([ONES, ONES, ONES, ONES]);

/** Negative, 0 or positive as a is before, at or after b. */
export function compare(a: Uint32Array, b: Uint32Array): number {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** a += 1; false when it wrapped past the last address. */
export function increment(a: Uint32Array): boolean {
  for (let i = 3; i >= 0; i--) {
    a[i] = (a[i]! + 1) >>> 0;
    if (a[i] !== 0) return true;
  }
  return false;
}

/** a -= 1 (a ≠ 0). */
export function decrement(a: Uint32Array): void {
  for (let i = 3; i >= 0; i--) {
    a[i] = (a[i]! - 1) >>> 0;
    if (a[i] !== ONES) return;
  }
}

/**
 * Calls `onBlock` with each block of the fewest CIDRs exactly covering lo..hi
 * (lo ≤ hi), in order: its first address (an array of this call's, read
 * before the next block) and its prefix length.
 */
export function cidrBlocks(
  lo: Uint32Array,
  hi: Uint32Array,
  onBlock: (start: Uint32Array, length: number) => void,
): void {
  const a = new Uint32Array(4), d = new Uint32Array(4);
  a.set(lo);
  for (;;) {
    // The largest block at `a`: aligned there, and no longer than hi - a + 1.
    subtract(hi, a, d);
    const fits = increment(d) ? highestBit(d) : 128;
    const bits = Math.min(trailingZeros(a), fits);
    onBlock(a, 128 - bits);
    if (bits === fits && (fits === 128 || isPowerOfTwo(d))) return; // reached hi
    addPowerOfTwo(a, bits);
  }
}

/** out = a - b (a ≥ b). */
function subtract(a: Uint32Array, b: Uint32Array, out: Uint32Array): void {
  let borrow = 0;
  for (let i = 3; i >= 0; i--) {
    const x = a[i]! - b[i]! - borrow;
    borrow = x < 0 ? 1 : 0;
    out[i] = x >>> 0;
  }
}

/** a += 2^bits (bits < 128). */
function addPowerOfTwo(a: Uint32Array, bits: number): void {
  let i = 3 - (bits >>> 5);
  let add = 2 ** (bits & 31);
  while (add !== 0 && i >= 0) {
    const sum = a[i]! + add;
    a[i] = sum >>> 0;
    add = sum > ONES ? 1 : 0;
    i--;
  }
}

/** Bit index, from the least significant end, of the highest set bit (a ≠ 0). */
function highestBit(a: Uint32Array): number {
  for (let i = 0; i < 4; i++) if (a[i] !== 0) return (3 - i) * 32 + 31 - Math.clz32(a[i]!);
  return -1;
}

/** Trailing zero bits (128 for 0). */
function trailingZeros(a: Uint32Array): number {
  for (let i = 3; i >= 0; i--) {
    const w = a[i]!;
    if (w !== 0) return (3 - i) * 32 + 31 - Math.clz32(w & -w);
  }
  return 128;
}

function isPowerOfTwo(a: Uint32Array): boolean {
  let ones = 0;
  for (let i = 0; i < 4; i++) {
    const w = a[i]!;
    if (w !== 0) {
      if ((w & (w - 1)) !== 0) return false;
      ones++;
    }
  }
  return ones === 1;
}
