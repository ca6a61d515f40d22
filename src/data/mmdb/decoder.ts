/**
 * Decodes values of a MaxMind DB data section (format 2.0, spec "Output Data
 * Section") straight from the file's bytes, into what mmdb-lib and the
 * project's records expect: maps as plain objects, arrays, strings, numbers
 * (uint16, uint32, int32, double, float), bigints (uint64, uint128 always),
 * booleans and bytes (a copied Uint8Array).
 *
 * Hostile bytes cannot make it loop or read outside the section: every read is
 * checked against the section's end, a pointer must land inside the section
 * and not on another pointer, nesting stops at libmaxminddb's 512 levels, and
 * one decode reads at most a million values (pointers that fan out to the same
 * values, each level twice, would otherwise double the work per level whenever
 * the shared values are not kept). What the format forbids is refused as
 * libmaxminddb refuses it (a float that is not 4 bytes, a uint16 over 2, a
 * data cache container or an end marker inside a value...), and in two places
 * more strictly, as the install-time check (src/data/sources/verify_data.ts) is: a
 * value running past the section (libmaxminddb reads on into the metadata) and
 * a map key that is not a string. A refusal throws a `DataSectionError` naming
 * the offset.
 */

import {
  MAX_DEPTH,
  T_ARRAY,
  T_BOOLEAN,
  T_BYTES,
  T_CONTAINER,
  T_DOUBLE,
  T_END_MARKER,
  T_EXTENDED,
  T_FLOAT,
  T_INT32,
  T_MAP,
  T_POINTER,
  T_STRING,
  T_UINT128,
  T_UINT16,
  T_UINT32,
  T_UINT64,
} from "./data_types.ts";

/** The most values one decode reads (a City record reads about 230 without sharing). */
export const MAX_VALUES = 1 << 20;

/**
 * Where values reached through pointers are kept, by data-section offset, so
 * records share them (map keys, the continent and country maps every record of
 * a place points at) and they are decoded once. The reader passes its record
 * cache (an LRU): records and the values they share are entries of one cache.
 */
export interface SharedValues {
  get(offset: number): unknown;
  set(offset: number, value: unknown): void;
}

/** The most map keys a decoder keeps in its own table (a City database uses a few dozen). */
const MAX_KEYS = 2048;

/** Shared values a decoder keeps when given no store: a table emptied when it is this full. */
export const DEFAULT_SHARED_VALUES = 65_536;

/** A value the data section does not allow, at a data-section offset. */
export class DataSectionError extends Error {
  constructor(readonly offset: number, reason: string) {
    super(`data section offset ${offset}: ${reason}`);
    this.name = "DataSectionError";
  }
}

/** Decodes the value starting at a data-section offset. */
export type DataDecoder = (offset: number) => unknown;

/**
 * A decoder over the data section `bytes[start, end)` (pointers count from
 * `start`). Values reached through a pointer are kept in `shared` and shared:
 * decoding the same pointer target twice returns the same object while it is
 * kept, so callers must not mutate what the decoder returns.
 */
export function createDataDecoder(
  bytes: Uint8Array,
  start: number,
  end: number,
  options: { shared?: SharedValues } = {},
): DataDecoder {
  if (!(Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start <= end)) {
    throw new RangeError(`Bad data section bounds [${start}, ${end})`);
  }
  if (end > bytes.length) {
    throw new RangeError(`The data section [${start}, ${end}) runs past the file's end`);
  }
  const db = bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shared = options.shared ?? boundedTable(DEFAULT_SHARED_VALUES);
  /** Map keys reached through pointers, by target offset (at most MAX_KEYS). */
  const keys = new Map<number, string>();
  /** Absolute position just after the value decoded last: the decoder's cursor. */
  let next = 0;
  /** Values the current decode may still read. */
  let budget = 0;

  const fail = (at: number, reason: string): never => {
    throw new DataSectionError(at - start, reason);
  };

  /** Decodes the value at absolute position `at`; leaves `next` after it. */
  const value = (at: number, depth: number): unknown => {
    if (at >= end) fail(at, "a value starts past the end of the data section");
    if (depth > MAX_DEPTH) fail(at, `data nested deeper than ${MAX_DEPTH} levels`);
    if (--budget < 0) fail(at, `a record of more than ${MAX_VALUES} values`);
    const ctrl = db[at]!;
    let type = ctrl >> 5;
    let p = at + 1;
    if (type === T_POINTER) return pointer(at, ctrl, depth);
    if (type === T_EXTENDED) {
      if (p >= end) fail(at, "an extended type runs past the end of the data section");
      type = 7 + db[p++]!;
      if (type < 8 || type > 15) fail(at, `unknown extended type ${type}`);
    }
    let size = ctrl & 31;
    if (size >= 29) {
      const extra = size - 28;
      if (p + extra > end) fail(at, "a size runs past the end of the data section");
      size = size === 29
        ? 29 + db[p]!
        : size === 30
        ? 285 + ((db[p]! << 8) | db[p + 1]!)
        : 65_821 + ((db[p]! << 16) | (db[p + 1]! << 8) | db[p + 2]!);
      p += extra;
    }
    switch (type) {
      case T_MAP:
        return map(at, p, size, depth);
      case T_ARRAY:
        return array(at, p, size, depth);
      case T_BOOLEAN:
        if (size > 1) fail(at, `a boolean of size ${size} (0 or 1 only)`);
        next = p;
        return size === 1;
      case T_CONTAINER:
        return fail(at, "a data cache container inside a value");
      case T_END_MARKER:
        return fail(at, "an end marker inside a value");
    }
    const stop = p + size;
    if (stop > end) fail(at, "a value runs past the end of the data section");
    next = stop;
    switch (type) {
      case T_STRING:
        return utf8(p, stop);
      case T_UINT32:
        if (size > 4) fail(at, `a uint32 of size ${size} (at most 4)`);
        return uint(p, stop);
      case T_DOUBLE:
        if (size !== 8) fail(at, `a double of size ${size} (8 only)`);
        return view.getFloat64(p);
      case T_UINT16:
        if (size > 2) fail(at, `a uint16 of size ${size} (at most 2)`);
        return uint(p, stop);
      case T_INT32:
        if (size > 4) fail(at, `an int32 of size ${size} (at most 4)`);
        // Only a 4-byte payload carries a sign (as libmaxminddb and mmdb-lib read it).
        return size === 4 ? view.getInt32(p) : uint(p, stop);
      case T_UINT64:
        if (size > 8) fail(at, `a uint64 of size ${size} (at most 8)`);
        return bigUint(p, stop);
      case T_UINT128:
        if (size > 16) fail(at, `a uint128 of size ${size} (at most 16)`);
        return bigUint(p, stop);
      case T_FLOAT:
        if (size !== 4) fail(at, `a float of size ${size} (4 only)`);
        return view.getFloat32(p);
      case T_BYTES:
        return db.slice(p, stop);
    }
    return fail(at, `unknown type ${type}`);
  };

  /** The offset the pointer at `at` (control byte `ctrl`) holds; leaves `next` after it. */
  const pointerOffset = (at: number, ctrl: number): number => {
    const length = ((ctrl >> 3) & 3) + 1;
    const p = at + 1;
    if (p + length > end) fail(at, "a pointer runs past the end of the data section");
    const v = ctrl & 7;
    next = p + length;
    return length === 1
      ? (v << 8) | db[p]!
      : length === 2
      ? ((v << 16) | (db[p]! << 8) | db[p + 1]!) + 2048
      : length === 3
      ? ((v << 24) | (db[p]! << 16) | (db[p + 1]! << 8) | db[p + 2]!) + 526_336
      : ((db[p]! << 24) >>> 0) + ((db[p + 1]! << 16) | (db[p + 2]! << 8) | db[p + 3]!);
  };

  /** The pointer at `at` (control byte `ctrl`): its target's value, shared. */
  const pointer = (at: number, ctrl: number, depth: number): unknown => {
    const offset = pointerOffset(at, ctrl);
    const after = next;
    let found = shared.get(offset);
    if (found === undefined) {
      const target = start + offset;
      if (target >= end) fail(at, `a pointer to ${offset}, past the end of the data section`);
      if (db[target]! >> 5 === T_POINTER) fail(at, `a pointer to a pointer (at ${offset})`);
      found = value(target, depth + 1);
      shared.set(offset, found);
    }
    next = after;
    return found;
  };

  const map = (at: number, p: number, pairs: number, depth: number): object => {
    // Each pair takes at least two bytes: refuse a count the section cannot hold before allocating.
    if (p + 2 * pairs > end) {
      fail(at, `a map of ${pairs} pairs runs past the end of the data section`);
    }
    const result: Record<string, unknown> = {};
    for (let i = 0; i < pairs; i++) {
      const key = keyAt(p, depth);
      const v = value(next, depth + 1);
      p = next;
      if (key === "__proto__") {
        // A plain assignment would set the object's prototype instead of a key.
        Object.defineProperty(result, key, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        result[key] = v;
      }
    }
    next = p;
    return result;
  };

  /**
   * The map key at `at`: a UTF-8 string, written there or pointed at. Keys pointed
   * at (nearly all: a City record has about 70) come from the decoder's own table:
   * a few dozen strings, looked up without the store's bookkeeping.
   */
  const keyAt = (at: number, depth: number): string => {
    if (at >= end) fail(at, "a map key starts past the end of the data section");
    const ctrl = db[at]!;
    if (ctrl >> 5 === T_STRING) return value(at, depth + 1) as string;
    if (ctrl >> 5 !== T_POINTER) fail(at, "a map key that is not a UTF-8 string");
    const offset = pointerOffset(at, ctrl);
    const after = next;
    let key = keys.get(offset);
    if (key === undefined) {
      const target = start + offset;
      if (target >= end) fail(at, `a pointer to ${offset}, past the end of the data section`);
      if (db[target]! >> 5 !== T_STRING) fail(at, "a map key that is not a UTF-8 string");
      key = value(target, depth + 1) as string;
      if (keys.size < MAX_KEYS) keys.set(offset, key);
    }
    next = after;
    return key;
  };

  const array = (at: number, p: number, items: number, depth: number): unknown[] => {
    if (p + items > end) {
      fail(at, `an array of ${items} values runs past the end of the data section`);
    }
    // Sized up front: growing by push() would leave spare capacity in every cached array.
    const result: unknown[] = new Array(items);
    for (let i = 0; i < items; i++) {
      result[i] = value(p, depth + 1);
      p = next;
    }
    next = p;
    return result;
  };

  const uint = (p: number, stop: number): number => {
    let n = 0;
    for (; p < stop; p++) n = n * 256 + db[p]!;
    return n;
  };

  const bigUint = (p: number, stop: number): bigint => {
    // Whole 32-bit words as numbers, joined as bigints: one BigInt step per word, not per byte.
    let n = 0n;
    let word = 0;
    let bytesInWord = (stop - p) % 4 || 4;
    for (; p < stop; p++) {
      word = word * 256 + db[p]!;
      if (--bytesInWord === 0) {
        n = (n << 32n) | BigInt(word);
        word = 0;
        bytesInWord = 4;
      }
    }
    return n;
  };

  const text = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Bytes the sequence `unitAt` read last took. */
  let width = 0;
  /** The UTF-16 unit of the well-formed 1- to 3-byte UTF-8 sequence at `i`, or -1. */
  const unitAt = (i: number, stop: number): number => {
    const c = db[i]!;
    if (c < 0x80) {
      width = 1;
      return c;
    }
    if (c >= 0xc2 && c < 0xe0 && i + 1 < stop) {
      const c1 = db[i + 1]!;
      if ((c1 & 0xc0) === 0x80) {
        width = 2;
        return ((c & 0x1f) << 6) | (c1 & 0x3f);
      }
    } else if (c >= 0xe0 && c < 0xf0 && i + 2 < stop) {
      const c1 = db[i + 1]!;
      const c2 = db[i + 2]!;
      const unit = ((c & 0x0f) << 12) | ((c1 & 0x3f) << 6) | (c2 & 0x3f);
      // Not overlong, not a surrogate.
      if (
        (c1 & 0xc0) === 0x80 && (c2 & 0xc0) === 0x80 && unit >= 0x800 &&
        (unit < 0xd800 || unit > 0xdfff)
      ) {
        width = 3;
        return unit;
      }
    }
    return -1;
  };
  const units: number[] = [];
  /**
   * Bytes [p, stop) as text. A record's names are short: decoded here, which costs
   * less than a call into the runtime's decoder. That decoder takes long strings and
   * any sequence but a well-formed 1- to 3-byte one, so malformed bytes get its
   * U+FFFD rules. Up to 12 bytes a string is joined unit by unit (V8 keeps strings
   * that short flat); longer ones are made in one step (joining would leave a chain
   * of string pieces in the cache).
   */
  const utf8 = (p: number, stop: number): string => {
    if (stop - p <= 12) {
      let s = "";
      for (let i = p; i < stop; i += width) {
        const unit = unitAt(i, stop);
        if (unit < 0) return text.decode(db.subarray(p, stop));
        s += String.fromCharCode(unit);
      }
      return s;
    }
    if (stop - p > 64) return text.decode(db.subarray(p, stop));
    units.length = 0;
    for (let i = p; i < stop; i += width) {
      const unit = unitAt(i, stop);
      if (unit < 0) return text.decode(db.subarray(p, stop));
      units.push(unit);
    }
    return String.fromCharCode.apply(null, units);
  };

  return (offset) => {
    if (!(offset >= 0 && offset < end - start)) {
      throw new DataSectionError(offset, "a record outside the data section");
    }
    budget = MAX_VALUES;
    return value(start + offset, 0);
  };
}

/** A table of at most `max` values, emptied when full (cheaper than an LRU: no recency). */
function boundedTable(max: number): SharedValues {
  const table = new Map<number, unknown>();
  return {
    get: (offset) => table.get(offset),
    set: (offset, value) => {
      if (table.size >= max) table.clear();
      table.set(offset, value);
    },
  };
}
