/**
 * MaxMind DB (format 2.0) data-section encoding for the writer: value types,
 * interning (every distinct value gets one id) and the byte encoders.
 * Pure module: no I/O, no top-level side effects.
 */

/** Type numbers of the MaxMind DB data section (spec "Output Data Section"). */
const T_STRING = 2;
const T_DOUBLE = 3;
const T_UINT16 = 5;
const T_UINT32 = 6;
const T_MAP = 7;
const T_INT32 = 8;
const T_UINT64 = 9;
const T_UINT128 = 10;
const T_ARRAY = 11;
const T_BOOLEAN = 14;
const T_FLOAT = 15;

/** Largest payload size a control byte can express (65,821 + 2^24 - 1). */
const MAX_PAYLOAD = 16_843_036;
const MAX_U64 = (1n << 64n) - 1n;
const MAX_U128 = (1n << 128n) - 1n;
/** Guards against cyclic values (which would otherwise recurse until the stack overflows). */
const MAX_DEPTH = 256;

/** The explicit data types that `TypedValue` can force. */
export type TypedKind = "uint16" | "uint32" | "uint64" | "uint128" | "int32" | "float" | "double";

/** A number or bigint stored with an explicit MaxMind DB type instead of the default mapping. */
export class TypedValue {
  /** Throws when `value` does not fit `type` (range, integrality). */
  constructor(readonly type: TypedKind, readonly value: number | bigint) {
    const bad = (why: string) => new Error(`${type}(${String(value)}): ${why}`);
    switch (type) {
      case "uint16":
      case "uint32":
      case "int32": {
        const [lo, hi] = type === "uint16"
          ? [0, 0xffff]
          : type === "uint32"
          ? [0, 0xffffffff]
          : [-0x80000000, 0x7fffffff];
        if (typeof value !== "number" || !Number.isInteger(value)) throw bad("not an integer");
        if (value < lo || value > hi) throw bad(`out of range ${lo}..${hi}`);
        break;
      }
      case "uint64":
      case "uint128": {
        const max = type === "uint64" ? MAX_U64 : MAX_U128;
        if (typeof value === "number" && !Number.isInteger(value)) throw bad("not an integer");
        if (typeof value !== "number" && typeof value !== "bigint") throw bad("not an integer");
        const big = BigInt(value);
        if (big < 0n || big > max) throw bad(`out of range 0..${max}`);
        this.value = big;
        break;
      }
      case "float":
      case "double":
        if (typeof value !== "number") throw bad("not a number");
        break;
      default:
        throw new Error(`unknown MaxMind DB type ${JSON.stringify(type)}`);
    }
  }
}

/**
 * A value the writer can store. Default mapping: string → utf8_string, boolean → boolean,
 * non-integer number → double, integer 0..2^32-1 → uint32, integer 2^32..2^64-1 → uint64,
 * negative integer ≥ -2^31 → int32 (other integers a double cannot hold as those → double,
 * which is lossless), bigint → uint64 (uint128 above 2^64-1), array → array, plain object → map.
 */
export type MmdbValue =
  | string
  | number
  | boolean
  | bigint
  | MmdbValue[]
  | { [key: string]: MmdbValue }
  | TypedValue;

/** Stores `n` as uint16 (0..65535). */
export function uint16(n: number): TypedValue {
  return new TypedValue("uint16", n);
}
/** Stores `n` as uint32 (0..2^32-1). */
export function uint32(n: number): TypedValue {
  return new TypedValue("uint32", n);
}
/** Stores `n` as uint64 (0..2^64-1); mmdb-lib reads it back as a bigint. */
export function uint64(n: number | bigint): TypedValue {
  return new TypedValue("uint64", n);
}
/** Stores `n` as uint128 (0..2^128-1); mmdb-lib reads it back as a bigint. */
export function uint128(n: bigint): TypedValue {
  return new TypedValue("uint128", n);
}
/** Stores `n` as a signed 32-bit integer. */
export function int32(n: number): TypedValue {
  return new TypedValue("int32", n);
}
/** Stores `n` as an IEEE-754 binary32 float (precision is lost). */
export function float(n: number): TypedValue {
  return new TypedValue("float", n);
}
/** Stores `n` as an IEEE-754 binary64 double (also what non-integers get by default). */
export function double(n: number): TypedValue {
  return new TypedValue("double", n);
}

/** A growable byte buffer. */
export class ByteWriter {
  buf: Uint8Array;
  len = 0;
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
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
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
const scratch = new DataView(new ArrayBuffer(8));

/** Appends a utf8_string. */
export function writeString(w: ByteWriter, s: string): void {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (!ascii) {
    const b = utf8.encode(s);
    writeHeader(w, T_STRING, b.length);
    w.bytes(b);
    return;
  }
  writeHeader(w, T_STRING, s.length);
  w.ensure(s.length);
  for (let i = 0; i < s.length; i++) w.buf[w.len++] = s.charCodeAt(i);
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

function writeInt32(w: ByteWriter, n: number): void {
  if (n >= 0) return writeUint(w, T_INT32, n);
  // Negative values need all 4 bytes: readers sign-extend only a 4-byte payload.
  writeHeader(w, T_INT32, 4);
  w.uintBE(n >>> 0, 4);
}

function writeFloat(w: ByteWriter, type: number, n: number): void {
  const size = type === T_DOUBLE ? 8 : 4;
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
function pointerLength(off: number): number {
  return off < 2048 ? 2 : off < 526_336 ? 3 : off < 134_744_064 ? 4 : 5;
}

function writePointer(w: ByteWriter, off: number): void {
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

function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "object") return `object ${Object.prototype.toString.call(v)}`;
  return typeof v;
}

function isPlainObject(v: object): v is Record<string, MmdbValue> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Interns values: each distinct value (by type and content, map key order included)
 * gets one id, so identical records and sub-values are stored once.
 * Composites are keyed by their children's ids, which keeps keys short.
 */
export class DataStore {
  private kinds: number[] = [];
  /** Scalars: the value; composites: child ids (maps: key, value, key, value, ...). */
  private vals: (string | number | bigint | boolean | Int32Array)[] = [];
  private strIds = new Map<string, number>();
  private u32Ids = new Map<number, number>();
  private otherIds = new Map<string, number>();
  private compIds = new Map<string, number>();

  /** Number of distinct values interned so far. */
  get size(): number {
    return this.kinds.length;
  }

  private add(kind: number, val: string | number | bigint | boolean | Int32Array): number {
    this.kinds.push(kind);
    this.vals.push(val);
    return this.kinds.length - 1;
  }

  private other(kind: number, key: string, val: number | bigint | boolean): number {
    const k = `${kind}:${key}`;
    let id = this.otherIds.get(k);
    if (id === undefined) this.otherIds.set(k, id = this.add(kind, val));
    return id;
  }

  private str(s: string): number {
    let id = this.strIds.get(s);
    if (id === undefined) {
      if (!s.isWellFormed()) throw new Error("string is not well-formed Unicode (lone surrogate)");
      if (s.length > MAX_PAYLOAD) throw new Error(`string longer than ${MAX_PAYLOAD} bytes`);
      this.strIds.set(s, id = this.add(T_STRING, s));
    }
    return id;
  }

  private num(n: number): number {
    if (Number.isInteger(n)) {
      if (n >= 0 && n <= 0xffffffff) {
        let id = this.u32Ids.get(n);
        if (id === undefined) this.u32Ids.set(n, id = this.add(T_UINT32, n));
        return id;
      }
      if (n > 0 && n <= 18446744073709551615) {
        // 2^64 itself rounds to this literal, so test the bigint too.
        const big = BigInt(n);
        if (big <= MAX_U64) return this.other(T_UINT64, big.toString(), big);
      }
      if (n < 0 && n >= -0x80000000) return this.other(T_INT32, String(n), n);
    }
    return this.other(T_DOUBLE, Object.is(n, -0) ? "-0" : String(n), n);
  }

  private typed(t: TypedValue): number {
    const v = t.value;
    switch (t.type) {
      case "uint16":
        return this.other(T_UINT16, String(v), v);
      case "uint32":
        return this.num(v as number);
      case "int32":
        return this.other(T_INT32, String(v), v);
      case "uint64":
        return this.other(T_UINT64, String(v), v);
      case "uint128":
        return this.other(T_UINT128, String(v), v);
      case "float": {
        const f = Math.fround(v as number);
        return this.other(T_FLOAT, Object.is(f, -0) ? "-0" : String(f), f);
      }
      case "double":
        return this.other(T_DOUBLE, Object.is(v, -0) ? "-0" : String(v), v);
    }
  }

  /** Returns the id of `v`, adding it (and its parts) if new. Throws on unsupported values. */
  intern(v: MmdbValue, depth = 0): number {
    switch (typeof v) {
      case "string":
        return this.str(v);
      case "number":
        return this.num(v);
      case "boolean":
        return this.other(T_BOOLEAN, v ? "1" : "0", v);
      case "bigint":
        if (v < 0n) throw new Error(`negative bigint ${v} (bigint maps to uint64/uint128)`);
        if (v > MAX_U128) throw new Error(`bigint ${v} exceeds uint128`);
        return this.other(v > MAX_U64 ? T_UINT128 : T_UINT64, v.toString(), v);
    }
    if (typeof v !== "object" || v === null) throw new Error(`unsupported value: ${describe(v)}`);
    if (v instanceof TypedValue) return this.typed(v);
    if (depth >= MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} (cyclic value?)`);
    if (Array.isArray(v)) {
      const ids = new Int32Array(v.length);
      let key = "a";
      for (let i = 0; i < v.length; i++) {
        ids[i] = this.child(v[i], depth, `[${i}]`);
        key += `${ids[i]},`;
      }
      return this.composite(T_ARRAY, key, ids);
    }
    if (!isPlainObject(v)) throw new Error(`unsupported value: ${describe(v)}`);
    const keys = Object.keys(v);
    const ids = new Int32Array(keys.length * 2);
    let key = "m";
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      ids[2 * i] = this.str(k);
      ids[2 * i + 1] = this.child(v[k], depth, `.${k}`);
      key += `${ids[2 * i]}:${ids[2 * i + 1]},`;
    }
    return this.composite(T_MAP, key, ids);
  }

  private child(v: MmdbValue | undefined, depth: number, where: string): number {
    try {
      return this.intern(v as MmdbValue, depth + 1);
    } catch (e) {
      // Prefix the path so the message says which field was bad.
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(msg.startsWith("at ") ? `at ${where}${msg.slice(3)}` : `at ${where}: ${msg}`);
    }
  }

  private composite(kind: number, key: string, ids: Int32Array): number {
    if (ids.length / (kind === T_MAP ? 2 : 1) > MAX_PAYLOAD) {
      throw new Error(`more than ${MAX_PAYLOAD} entries`);
    }
    let id = this.compIds.get(key);
    if (id === undefined) this.compIds.set(key, id = this.add(kind, ids));
    return id;
  }

  /** Starts a fresh data section for these values (one per `toBytes`). */
  section(): DataSection {
    return new DataSection(this.kinds, this.vals);
  }
}

/**
 * One data section being written. Values are written on first use; later uses of a
 * value already written become a pointer to it when the pointer is shorter.
 * Pointers always target a value written in place, never another pointer.
 */
export class DataSection {
  readonly w = new ByteWriter();
  /** Offset of each value's in-place copy, -1 until written. */
  private offsets: Float64Array;
  /** Bytes the in-place copy took. */
  private sizes: Float64Array;

  constructor(
    private kinds: readonly number[],
    private vals: readonly (string | number | bigint | boolean | Int32Array)[],
  ) {
    this.offsets = new Float64Array(kinds.length).fill(-1);
    this.sizes = new Float64Array(kinds.length);
  }

  /** Data-section offset of value `id` as a tree record target, writing it if needed. */
  top(id: number): number {
    const off = this.offsets[id]!;
    if (off >= 0) return off;
    this.write(id);
    return this.offsets[id]!;
  }

  private write(id: number): void {
    const w = this.w;
    const off = this.offsets[id]!;
    if (off >= 0 && pointerLength(off) < this.sizes[id]!) return writePointer(w, off);
    const start = w.len;
    const kind = this.kinds[id]!;
    const val = this.vals[id]!;
    switch (kind) {
      case T_STRING:
        writeString(w, val as string);
        break;
      case T_UINT16:
      case T_UINT32:
        writeUint(w, kind, val as number);
        break;
      case T_INT32:
        writeInt32(w, val as number);
        break;
      case T_UINT64:
      case T_UINT128:
        writeBigUint(w, kind, val as bigint);
        break;
      case T_DOUBLE:
      case T_FLOAT:
        writeFloat(w, kind, val as number);
        break;
      case T_BOOLEAN:
        writeBoolean(w, val as boolean);
        break;
      default: {
        const ids = val as Int32Array;
        if (kind === T_MAP) writeMapHeader(w, ids.length / 2);
        else writeArrayHeader(w, ids.length);
        for (let i = 0; i < ids.length; i++) this.write(ids[i]!);
      }
    }
    if (w.len > 0xffffffff) throw new Error("data section exceeds 4 GiB (pointer limit)");
    if (off < 0) {
      this.offsets[id] = start;
      this.sizes[id] = w.len - start;
    }
  }
}
