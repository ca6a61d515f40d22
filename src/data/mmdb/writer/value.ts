/**
 * Values the MaxMind DB writer stores: the `MmdbValue` type and the explicit type
 * wrappers (`uint16(n)`, `float(n)`, ...). Pure module: no I/O, no side effects.
 */

/** Largest uint64. */
export const MAX_U64 = (1n << 64n) - 1n;
/** Largest uint128. */
export const MAX_U128 = (1n << 128n) - 1n;

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
