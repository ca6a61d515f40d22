/**
 * MaxMind DB (format 2.0) data-section byte encoders: control bytes, scalars,
 * containers' headers and pointers. Pure module: no I/O, no side effects.
 */

// Type numbers of the MaxMind DB data section (spec "Output Data Section").
/** Type number of utf8_string. */
export const T_STRING = 2;
/** Type number of double. */
export const T_DOUBLE = 3;
/** Type number of uint16. */
export const T_UINT16 = 5;
/** Type number of uint32. */
export const T_UINT32 = 6;
/** Type number of map. */
export const T_MAP = 7;
/** Type number of int32. */
export const T_INT32 = 8;
/** Type number of uint64. */
export const T_UINT64 = 9;
/** Type number of uint128. */
export const T_UINT128 = 10;
/** Type number of array. */
export const T_ARRAY = 11;
/** Type number of boolean. */
export const T_BOOLEAN = 14;
/** Type number of float. */
export const T_FLOAT = 15;

/** Largest payload size a control byte can express (65,821 + 2^24 - 1). */
export const MAX_PAYLOAD = 16_843_036;

/** A growable byte buffer. */
export class ByteWriter {
  /** Backing store; bytes past `len` are unused. */
  buf: Uint8Array;
  /** Bytes written so far. */
  len = 0;
  /** Eight bytes to put a float's encoding in before it is copied. */
  readonly floatBytes = new DataView(new ArrayBuffer(8));
  /** Starts with room for `initial` bytes. */
  constructor(initial = 1 << 16) {
    this.buf = new Uint8Array(initial);
  }
  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.len + n;
    if (need <= this.buf.length) return;
    const next = new Uint8Array(Math.max(need, this.buf.length * 2));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  /** Appends the low `count` bytes of `n` (≤ 2^32-1), big-endian. */
  uintBE(n: number, count: number): void {
    this.ensure(count);
    for (let i = count - 1; i >= 0; i--) this.buf[this.len++] = (n >>> (i * 8)) & 0xff;
  }
  /** Appends `b`. */
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
}

/**
 * A ByteWriter that grows by adding fixed chunks instead of copying into a
 * buffer twice the size: for a data section of hundreds of megabytes, the
 * peak is the bytes written, not three times that. `offset` is the position
 * in the whole stream; `chunks()` hands the bytes over (and lets them go).
 */
export class ChunkedByteWriter extends ByteWriter {
  #done: Uint8Array[] = [];
  #base = 0;

  constructor(readonly chunkSize = 1 << 22) {
    super(chunkSize);
  }

  /** Bytes written so far, across chunks. */
  get offset(): number {
    return this.#base + this.len;
  }

  override ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    this.#done.push(this.buf.subarray(0, this.len));
    this.#base += this.len;
    this.buf = new Uint8Array(Math.max(this.chunkSize, n));
    this.len = 0;
  }

  /** The written bytes, in order; the writer is empty afterwards. */
  chunks(): Uint8Array[] {
    const all = [...this.#done, this.buf.subarray(0, this.len)];
    this.#done = [];
    this.#base = 0;
    this.buf = new Uint8Array(0);
    this.len = 0;
    return all;
  }
}

/** Control byte(s) for `type` with payload size (or entry count) `size`. */
function writeHeader(w: ByteWriter, type: number, size: number): void {
  if (size > MAX_PAYLOAD) {
    throw new Error(`value too large for MaxMind DB: size ${size} > ${MAX_PAYLOAD}`);
  }
  let field = size;
  let extra = 0;
  let extraLen = 0;
  if (size >= 65_821) [field, extra, extraLen] = [31, size - 65_821, 3];
  else if (size >= 285) [field, extra, extraLen] = [30, size - 285, 2];
  else if (size >= 29) [field, extra, extraLen] = [29, size - 29, 1];
  w.ensure(2);
  if (type <= 7) {
    w.buf[w.len++] = (type << 5) | field;
  } else {
    // Extended type: first byte has type 0, the next byte holds type - 7.
    w.buf[w.len++] = field;
    w.buf[w.len++] = type - 7;
  }
  if (extraLen) w.uintBE(extra, extraLen);
}

const utf8 = new TextEncoder();

/** Appends a utf8_string. */
export function writeString(w: ByteWriter, s: string): void {
  // Written as ASCII (one byte a unit, the usual case), redone as UTF-8 at the first other unit.
  const n = s.length;
  w.ensure(n + 5); // the header (at most 5 bytes) and the text in one piece: the rollback needs it
  const start = w.len;
  writeHeader(w, T_STRING, n);
  const buf = w.buf;
  let o = w.len;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) {
      w.len = start;
      const b = utf8.encode(s);
      writeHeader(w, T_STRING, b.length);
      w.bytes(b);
      return;
    }
    buf[o++] = c;
  }
  w.len = o;
}

/** Appends an unsigned (or non-negative int32) integer in the fewest bytes. */
export function writeUint(w: ByteWriter, type: number, n: number): void {
  const count = n === 0 ? 0 : n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4;
  writeHeader(w, type, count);
  w.uintBE(n, count);
}

/** Appends a uint64/uint128 from a bigint, in the fewest bytes. */
export function writeBigUint(w: ByteWriter, type: number, n: bigint): void {
  const bytes: number[] = [];
  for (let v = n; v > 0n; v >>= 8n) bytes.push(Number(v & 0xffn));
  writeHeader(w, type, bytes.length);
  w.ensure(bytes.length);
  for (let i = bytes.length - 1; i >= 0; i--) w.buf[w.len++] = bytes[i]!;
}

/** Appends an int32 (negative values take 4 bytes). */
export function writeInt32(w: ByteWriter, n: number): void {
  if (n >= 0) return writeUint(w, T_INT32, n);
  // Negative values need all 4 bytes: readers sign-extend only a 4-byte payload.
  writeHeader(w, T_INT32, 4);
  w.uintBE(n >>> 0, 4);
}

/** Appends a double (`T_DOUBLE`) or float (`T_FLOAT`). */
export function writeFloat(w: ByteWriter, type: number, n: number): void {
  const size = type === T_DOUBLE ? 8 : 4;
  const scratch = w.floatBytes;
  if (size === 8) scratch.setFloat64(0, n);
  else scratch.setFloat32(0, n);
  writeHeader(w, type, size);
  w.bytes(new Uint8Array(scratch.buffer, 0, size));
}

/** Appends a boolean (no payload: the size field is the value). */
export function writeBoolean(w: ByteWriter, b: boolean): void {
  writeHeader(w, T_BOOLEAN, b ? 1 : 0);
}

/** Appends a map header announcing `pairs` key/value pairs. */
export function writeMapHeader(w: ByteWriter, pairs: number): void {
  writeHeader(w, T_MAP, pairs);
}

/** Appends an array header announcing `items` values. */
export function writeArrayHeader(w: ByteWriter, items: number): void {
  writeHeader(w, T_ARRAY, items);
}

/** Appends uint16 `n` (metadata helper). */
export function writeUint16(w: ByteWriter, n: number): void {
  writeUint(w, T_UINT16, n);
}
/** Appends uint32 `n` (metadata helper). */
export function writeUint32(w: ByteWriter, n: number): void {
  writeUint(w, T_UINT32, n);
}
/** Appends uint64 `n` (metadata helper). */
export function writeUint64(w: ByteWriter, n: bigint): void {
  writeBigUint(w, T_UINT64, n);
}

/** Bytes a pointer to data-section offset `off` takes. */
export function pointerLength(off: number): number {
  return off < 2048 ? 2 : off < 526_336 ? 3 : off < 134_744_064 ? 4 : 5;
}

/** Appends a pointer to data-section offset `off`. */
export function writePointer(w: ByteWriter, off: number): void {
  // 001SSVVV: SS picks 1-4 following bytes; sizes 0-2 carry a bias so ranges do not overlap.
  if (off < 2048) {
    w.ensure(1);
    w.buf[w.len++] = 0x20 | (off >>> 8);
    w.uintBE(off, 1);
  } else if (off < 526_336) {
    const v = off - 2048;
    w.ensure(1);
    w.buf[w.len++] = 0x28 | (v >>> 16);
    w.uintBE(v, 2);
  } else if (off < 134_744_064) {
    const v = off - 526_336;
    w.ensure(1);
    w.buf[w.len++] = 0x30 | (v >>> 24);
    w.uintBE(v, 3);
  } else {
    w.ensure(1);
    w.buf[w.len++] = 0x38;
    w.uintBE(off, 4);
  }
}
