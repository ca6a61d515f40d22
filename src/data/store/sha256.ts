/**
 * SHA-256 (FIPS 180-4) of a text's UTF-8 bytes, in plain JavaScript, for the
 * API key check on every keyed request. node:crypto's `createHash` gives the
 * same digest but makes a native hash object per call, which under load costs
 * a keyed request more CPU than this loop over preallocated arrays
 * (bench:http's keyed variant). A test holds the two equal.
 */

/** First 32 bits of the fractional parts of `f(prime)` for the first `count` primes. */
function fractionBits(count: number, f: (n: number) => number): Uint32Array {
  const out = new Uint32Array(count);
  let found = 0;
  for (let n = 2; found < count; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
    if (!prime) continue;
    const root = f(n);
    out[found++] = Math.floor((root - Math.floor(root)) * 2 ** 32);
  }
  return out;
}

/** The round constants (cube roots) and the initial hash (square roots), as the standard defines them. */
const K = fractionBits(64, Math.cbrt);
const H0 = fractionBits(8, Math.sqrt);

// The working arrays, made once and reused by every call (synchronous, so never by two at
// once): kept at module level for speed (bench:http's keyed variant). Texts longer than
// the block buffer holds (never a key or a caller id) get a buffer of their own.
const words = new Uint32Array(64);
const state = new Uint32Array(8);
const blocks = new Uint8Array(256);
const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Lower-case hex SHA-256 of `text` encoded as UTF-8. */
export function sha256Hex(text: string): string {
  // UTF-8 needs at most 3 bytes per UTF-16 unit; then 0x80, padding and the 8-byte length.
  const room = Math.ceil((text.length * 3 + 9) / 64) * 64;
  const buffer = room <= blocks.length ? blocks : new Uint8Array(room);
  const length = encoder.encodeInto(text, buffer).written;
  const end = Math.ceil((length + 9) / 64) * 64;
  buffer.fill(0, length, end);
  buffer[length] = 0x80;
  const bits = length * 8;
  buffer[end - 5] = Math.floor(bits / 2 ** 32) & 0xff; // lengths past 4 GB never occur here
  buffer[end - 4] = bits >>> 24;
  buffer[end - 3] = (bits >>> 16) & 0xff;
  buffer[end - 2] = (bits >>> 8) & 0xff;
  buffer[end - 1] = bits & 0xff;
  state.set(H0);
  for (let block = 0; block < end; block += 64) compress(buffer, block);
  let hex = "";
  for (let i = 0; i < 8; i++) {
    const h = state[i]!;
    hex += HEX[h >>> 24]! + HEX[(h >>> 16) & 0xff]! + HEX[(h >>> 8) & 0xff]! + HEX[h & 0xff]!;
  }
  return hex;
}

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** One 64-byte block at `offset` of `buffer` into the state. */
function compress(buffer: Uint8Array, offset: number): void {
  for (let t = 0; t < 16; t++) {
    const i = offset + t * 4;
    words[t] = (buffer[i]! << 24) | (buffer[i + 1]! << 16) | (buffer[i + 2]! << 8) |
      buffer[i + 3]!;
  }
  for (let t = 16; t < 64; t++) {
    const w15 = words[t - 15]!;
    const w2 = words[t - 2]!;
    const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
    const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
    words[t] = words[t - 16]! + s0 + words[t - 7]! + s1;
  }
  let a = state[0]!, b = state[1]!, c = state[2]!, d = state[3]!;
  let e = state[4]!, f = state[5]!, g = state[6]!, h = state[7]!;
  for (let t = 0; t < 64; t++) {
    const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]! +
      words[t]!) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = state[0]! + a;
  state[1] = state[1]! + b;
  state[2] = state[2]! + c;
  state[3] = state[3]! + d;
  state[4] = state[4]! + e;
  state[5] = state[5]! + f;
  state[6] = state[6]! + g;
  state[7] = state[7]! + h;
}
