/**
 * The writer's data store: interns values (each distinct value gets one id) and
 * writes them into a data section, sharing repeated values through pointers.
 * Pure module: no I/O, no side effects.
 */

import {
  ByteWriter,
  MAX_PAYLOAD,
  pointerLength,
  T_ARRAY,
  T_BOOLEAN,
  T_DOUBLE,
  T_FLOAT,
  T_INT32,
  T_MAP,
  T_STRING,
  T_UINT128,
  T_UINT16,
  T_UINT32,
  T_UINT64,
  writeArrayHeader,
  writeBigUint,
  writeBoolean,
  writeFloat,
  writeInt32,
  writeMapHeader,
  writePointer,
  writeString,
  writeUint,
} from "./encode.ts";
import { MAX_U128, MAX_U64, type MmdbValue, TypedValue } from "./value.ts";

/** Guards against cyclic values (which would otherwise recurse until the stack overflows). */
const MAX_DEPTH = 256;

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

  #add(kind: number, val: string | number | bigint | boolean | Int32Array): number {
    this.kinds.push(kind);
    this.vals.push(val);
    return this.kinds.length - 1;
  }

  #other(kind: number, key: string, val: number | bigint | boolean): number {
    const k = `${kind}:${key}`;
    let id = this.otherIds.get(k);
    if (id === undefined) this.otherIds.set(k, id = this.#add(kind, val));
    return id;
  }

  #str(s: string): number {
    let id = this.strIds.get(s);
    if (id === undefined) {
      if (!s.isWellFormed()) throw new Error("string is not well-formed Unicode (lone surrogate)");
      // UTF-8 takes up to 3 bytes per UTF-16 unit: only long strings need measuring.
      if (s.length * 3 > MAX_PAYLOAD && new TextEncoder().encode(s).length > MAX_PAYLOAD) {
        throw new Error(`string longer than ${MAX_PAYLOAD} bytes in UTF-8`);
      }
      this.strIds.set(s, id = this.#add(T_STRING, s));
    }
    return id;
  }

  #num(n: number): number {
    if (Number.isInteger(n)) {
      if (n >= 0 && n <= 0xffffffff) {
        let id = this.u32Ids.get(n);
        if (id === undefined) this.u32Ids.set(n, id = this.#add(T_UINT32, n));
        return id;
      }
      if (n > 0 && n <= 18446744073709551615) {
        // 2^64 itself rounds to this literal, so test the bigint too.
        const big = BigInt(n);
        if (big <= MAX_U64) return this.#other(T_UINT64, big.toString(), big);
      }
      if (n < 0 && n >= -0x80000000) return this.#other(T_INT32, String(n), n);
    }
    return this.#other(T_DOUBLE, Object.is(n, -0) ? "-0" : String(n), n);
  }

  #typed(t: TypedValue): number {
    const v = t.value;
    switch (t.type) {
      case "uint16":
        return this.#other(T_UINT16, String(v), v);
      case "uint32":
        return this.#num(v as number);
      case "int32":
        return this.#other(T_INT32, String(v), v);
      case "uint64":
        return this.#other(T_UINT64, String(v), v);
      case "uint128":
        return this.#other(T_UINT128, String(v), v);
      case "float": {
        const f = Math.fround(v as number);
        return this.#other(T_FLOAT, Object.is(f, -0) ? "-0" : String(f), f);
      }
      case "double":
        return this.#other(T_DOUBLE, Object.is(v, -0) ? "-0" : String(v), v);
    }
  }

  /** Returns the id of `v`, adding it (and its parts) if new. Throws on unsupported values. */
  intern(v: MmdbValue, depth = 0): number {
    switch (typeof v) {
      case "string":
        return this.#str(v);
      case "number":
        return this.#num(v);
      case "boolean":
        return this.#other(T_BOOLEAN, v ? "1" : "0", v);
      case "bigint":
        if (v < 0n) throw new Error(`negative bigint ${v} (bigint maps to uint64/uint128)`);
        if (v > MAX_U128) throw new Error(`bigint ${v} exceeds uint128`);
        return this.#other(v > MAX_U64 ? T_UINT128 : T_UINT64, v.toString(), v);
    }
    if (typeof v !== "object" || v === null) throw new Error(`unsupported value: ${describe(v)}`);
    if (v instanceof TypedValue) return this.#typed(v);
    if (depth >= MAX_DEPTH) throw new Error(`nesting deeper than ${MAX_DEPTH} (cyclic value?)`);
    // Child ids go to a plain array; the Int32Array is only made for a new value.
    const ids: number[] = [];
    let key: string;
    if (Array.isArray(v)) {
      key = "a";
      for (let i = 0; i < v.length; i++) {
        const id = this.#child(v[i], depth, i);
        ids.push(id);
        key += id + ",";
      }
    } else {
      if (!isPlainObject(v)) throw new Error(`unsupported value: ${describe(v)}`);
      key = "m";
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        const kid = this.#str(k);
        const vid = this.#child(v[k], depth, k);
        ids.push(kid, vid);
        key += kid + ":" + vid + ",";
      }
    }
    let id = this.compIds.get(key);
    if (id === undefined) {
      const kind = key.charCodeAt(0) === 97 ? T_ARRAY : T_MAP;
      if (ids.length / (kind === T_MAP ? 2 : 1) > MAX_PAYLOAD) {
        throw new Error(`more than ${MAX_PAYLOAD} entries`);
      }
      this.compIds.set(key, id = this.#add(kind, Int32Array.from(ids)));
    }
    return id;
  }

  #child(v: MmdbValue | undefined, depth: number, at: string | number): number {
    try {
      return this.intern(v as MmdbValue, depth + 1);
    } catch (e) {
      // Prefix the path so the message says which field was bad.
      const msg = e instanceof Error ? e.message : String(e);
      const step = typeof at === "number" ? `[${at}]` : `.${at}`;
      throw new Error(msg.startsWith("at ") ? `at ${step}${msg.slice(3)}` : `at ${step}: ${msg}`);
    }
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
  /** The section's bytes so far. */
  readonly w = new ByteWriter();
  /** Offset of each value's in-place copy, -1 until written. */
  private offsets: Float64Array;
  /** Bytes the in-place copy took. */
  private sizes: Float64Array;

  /** Over the store's value kinds and payloads (shared, not copied). */
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
    this.#write(id);
    return this.offsets[id]!;
  }

  #write(id: number): void {
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
        for (let i = 0; i < ids.length; i++) this.#write(ids[i]!);
      }
    }
    if (w.len > 0xffffffff) throw new Error("data section exceeds 4 GiB (pointer limit)");
    if (off < 0) {
      this.offsets[id] = start;
      this.sizes[id] = w.len - start;
    }
  }
}
