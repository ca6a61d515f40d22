/**
 * Strict decoding of a MaxMind DB data section, as libmaxminddb decodes: every
 * value is walked once, in order (as maxminddb-golang's Verify walks it), and
 * each encoding the format forbids is refused, naming its offset:
 * - a double whose size is not 8, a float whose size is not 4, a uint16 over
 *   2 bytes, a uint32 or int32 over 4, a uint64 over 8, a uint128 over 16, a
 *   boolean whose size is not 0 or 1;
 * - a value or a pointer that runs past the end of the section, a pointer to
 *   a place that is not the start of a value, or to another pointer;
 * - a map key that is not a UTF-8 string (directly or through a pointer);
 * - the types no data section may hold (data cache container, end marker,
 *   unknown extended types), and nesting deeper than libmaxminddb's 512.
 * The decoder that serves lookups (src/data/mmdb/decoder.ts) refuses the same
 * encodings when it reads a record; this walks the whole section once, at install.
 */

import {
  MAX_DEPTH,
  T_ARRAY,
  T_BOOLEAN,
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
} from "../mmdb/data_types.ts";

/** Largest size each numeric type allows (exact for double and float). */
const MAX_SIZE: Record<number, number> = {
  [T_UINT16]: 2,
  [T_UINT32]: 4,
  [T_INT32]: 4,
  [T_UINT64]: 8,
  [T_UINT128]: 16,
};
const TYPE_NAMES: Record<number, string> = {
  [T_DOUBLE]: "double",
  [T_UINT16]: "uint16",
  [T_UINT32]: "uint32",
  [T_INT32]: "int32",
  [T_UINT64]: "uint64",
  [T_UINT128]: "uint128",
  [T_FLOAT]: "float",
};

/** libmaxminddb's MAXIMUM_DATA_STRUCTURE_DEPTH. */

/**
 * Walks the section `bytes[start, start + size)`; throws on the first
 * forbidden encoding. Returns a mark per byte: 1 where a value starts (so a
 * search tree's records can be checked to point at one).
 */
export function checkDataSection(
  bytes: Uint8Array,
  start: number,
  size: number,
  section = "data section",
): Uint8Array {
  const starts = new Uint8Array(size);
  // Pointer targets, checked once every start is marked: a typed array, not a JS array
  // (millions of entries in a City database would leave 100+ MB of garbage in the heap).
  let pointers = new Uint32Array(1024);
  let pointerCount = 0;
  const fail = (at: number, what: string): never => {
    throw new Error(`Invalid MaxMind DB: ${section} offset ${at}: ${what}`);
  };
  const byte = (at: number) => bytes[start + at]!;

  // The control bytes last decoded (variables, not an object per value: the City has millions).
  let cType = 0, cSize = 0, cPayload = 0, cTarget = -1;
  /** Decodes the control bytes at `at` into cType, cSize, cPayload (and cTarget for a pointer). */
  const control = (at: number): void => {
    if (at >= size) fail(at, "a value runs past the end of the section");
    const ctrl = byte(at);
    let type = ctrl >> 5;
    let next = at + 1;
    if (type === T_EXTENDED) {
      if (next >= size) fail(at, "an extended type runs past the end of the section");
      type = 7 + byte(next++);
      if (type < 8 || type > 15) fail(at, `unknown extended type ${type}`);
    }
    if (type === T_POINTER) {
      const length = ((ctrl >> 3) & 3) + 1;
      if (next + length > size) fail(at, "a pointer runs past the end of the section");
      const b = (i: number) => byte(next + i);
      const v = ctrl & 7;
      const target = length === 1
        ? (v << 8) | b(0)
        : length === 2
        ? ((v << 16) | (b(0) << 8) | b(1)) + 2048
        : length === 3
        ? ((v << 24) | (b(0) << 16) | (b(1) << 8) | b(2)) + 526336
        : ((b(0) << 24) >>> 0) + ((b(1) << 16) | (b(2) << 8) | b(3));
      if (target >= size) fail(at, `a pointer to ${target}, past the end of the section`);
      cType = type, cSize = 0, cPayload = next + length, cTarget = target;
      return;
    }
    let length = ctrl & 31;
    if (length >= 29) {
      const extra = length - 28;
      if (next + extra > size) fail(at, "a size runs past the end of the section");
      length = length === 29
        ? 29 + byte(next)
        : length === 30
        ? 285 + ((byte(next) << 8) | byte(next + 1))
        : 65821 + ((byte(next) << 16) | (byte(next + 1) << 8) | byte(next + 2));
      next += extra;
    }
    cType = type, cSize = length, cPayload = next, cTarget = -1;
  };

  /** Checks the value at `at`; returns the offset after it. */
  const value = (at: number, depth: number): number => {
    if (depth > MAX_DEPTH) fail(at, `data nested deeper than ${MAX_DEPTH} levels`);
    starts[at] = 1;
    control(at);
    const type = cType, length = cSize, payload = cPayload;
    switch (type) {
      case T_POINTER:
        if (pointerCount === pointers.length) {
          const bigger = new Uint32Array(pointers.length * 2);
          bigger.set(pointers);
          pointers = bigger;
        }
        pointers[pointerCount++] = cTarget;
        return payload;
      case T_MAP: {
        let next = payload;
        for (let i = 0; i < length; i++) {
          if (keyType(next) !== T_STRING) fail(next, "a map key that is not a UTF-8 string");
          next = value(next, depth + 1);
          next = value(next, depth + 1);
        }
        return next;
      }
      case T_ARRAY: {
        let next = payload;
        for (let i = 0; i < length; i++) next = value(next, depth + 1);
        return next;
      }
      case T_BOOLEAN:
        if (length > 1) fail(at, `a boolean of size ${length} (0 or 1 only)`);
        return payload;
      case T_CONTAINER:
      case T_END_MARKER:
        return fail(at, `type ${type} (${type === 12 ? "data cache container" : "end marker"})`);
      case T_DOUBLE:
      case T_FLOAT: {
        const expected = type === T_DOUBLE ? 8 : 4;
        if (length !== expected) {
          fail(at, `a ${TYPE_NAMES[type]} of size ${length} (${expected} only)`);
        }
        break;
      }
      default: {
        const max = MAX_SIZE[type];
        if (max !== undefined && length > max) {
          fail(at, `a ${TYPE_NAMES[type]} of size ${length} (at most ${max})`);
        }
      }
    }
    if (payload + length > size) fail(at, "a value runs past the end of the section");
    return payload + length;
  };

  /** The type of a map key, through one pointer. */
  const keyType = (at: number): number => {
    control(at);
    if (cType === T_POINTER) control(cTarget);
    return cType;
  };

  for (let at = 0; at < size;) at = value(at, 0);
  for (let i = 0; i < pointerCount; i++) {
    const target = pointers[i]!;
    if (!starts[target]) fail(target, "a pointer to a place that is not the start of a value");
    control(target);
    if (cType === T_POINTER) fail(target, "a pointer to a pointer");
  }
  return starts;
}
