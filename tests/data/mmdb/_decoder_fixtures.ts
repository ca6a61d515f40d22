/**
 * Values for the decoder tests: a record holding every type the project's writer
 * stores (with sizes that need each length encoding and values shared behind
 * pointers, also pointers to values that hold pointers), what our decoder must
 * return for it, and a hand-made data section with what the writer never writes
 * (pointers of every size, bytes, a `__proto__` key).
 */

import {
  ByteWriter,
  writeMapHeader,
  writePointer,
  writeString,
} from "../../../src/data/mmdb/writer/encode.ts";
import {
  double,
  float,
  int32,
  type MmdbValue,
  TypedValue,
  uint128,
  uint16,
  uint32,
  uint64,
} from "../../../src/data/mmdb/writer/writer.ts";

const names = { de: "Deutschland", en: "Germany", ja: "ドイツ", ru: "Германия" };
const country = { geoname_id: 2921044, iso_code: "DE", names };

/** Keys `k0`..`k{n-1}`, each with its index (a map of n pairs). */
const bigMap = (n: number): Record<string, MmdbValue> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

/** One record with every type and every length encoding the writer produces. */
export const EVERY_TYPE: Record<string, MmdbValue> = {
  str: "hello",
  empty: "",
  quoted: 'he said "hi"\nand left',
  unicode: "Zürich 東京 🎉",
  bom: "\ufeffstarts with a byte order mark",
  short29: "y".repeat(29),
  long300: "z".repeat(300),
  long70k: "x".repeat(70_000),
  u16: uint16(65535),
  u16zero: uint16(0),
  u32: uint32(4294967295),
  u32def: 13335,
  u64: uint64(2n ** 64n - 1n),
  u64def: 2 ** 40,
  u64small: uint64(5),
  u128: uint128(2n ** 128n - 1n),
  u128small: uint128(0x1234n),
  u128zero: uint128(0n),
  bigdef: 2n ** 100n,
  i32min: int32(-2147483648),
  i32max: int32(2147483647),
  negdef: -5,
  i32pos: int32(77),
  f: float(1.5),
  fneg: float(-0.1),
  d: double(3.141593),
  ddef: -2.5,
  big: 1e300,
  tiny: 5e-324,
  t: true,
  fl: false,
  arr: [1, "a", [], {}, [2, [3.25]]],
  arr300: Array.from({ length: 300 }, (_, i) => `item ${i}`),
  nested: { a: { b: { c: [true, { d: "deep" }] } } },
  emptyMap: {},
  emptyArr: [],
  zero: 0,
  map300: bigMap(300),
  map70k: bigMap(70_000),
  // Stored once: the later uses are pointers, to maps that themselves hold pointers to `names`.
  country,
  registered_country: country,
  represented: { country, names },
  subdivisions: [country, { names }, country],
};

/** What the decoder returns for a value the writer stored (its default type mapping). */
export function expectedPlain(v: MmdbValue): unknown {
  if (v instanceof TypedValue) {
    if (v.type === "uint64" || v.type === "uint128") return BigInt(v.value);
    if (v.type === "float") return Math.fround(Number(v.value));
    return Number(v.value);
  }
  if (typeof v === "number" && Number.isInteger(v) && v >= 2 ** 32 && v < 2 ** 64) {
    return BigInt(v); // stored as uint64, read back as a bigint
  }
  if (Array.isArray(v)) return v.map(expectedPlain);
  if (typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expectedPlain(x)]));
  }
  return v;
}

/**
 * A data section whose record (at `record`) reaches strings through a pointer of
 * each size: 2 bytes (target < 2,048), 3 (< 526,336), 4, and 5 (a 32-bit value,
 * here to a small offset, which the format allows), holds bytes, and a key
 * `__proto__`. About 535 KB.
 */
export function pointerSizesSection(): {
  data: Uint8Array;
  record: number;
  expected: Record<string, unknown>;
} {
  const w = new ByteWriter(600_000);
  const zero = w.len;
  writeString(w, "zero");
  writeString(w, "f".repeat(3_000));
  const twoK = w.len; // past 2,048: needs a 3-byte pointer
  writeString(w, "past 2048");
  writeString(w, "g".repeat(530_000));
  const halfMeg = w.len; // past 526,336: needs a 4-byte pointer
  writeString(w, "past 526336");
  const inner = w.len;
  writeMapHeader(w, 1);
  writeString(w, "x");
  writeString(w, "y");

  const record = w.len;
  writeMapHeader(w, 7);
  writeString(w, "p2");
  writePointer(w, zero);
  writeString(w, "p3");
  writePointer(w, twoK);
  writeString(w, "p4");
  writePointer(w, halfMeg);
  writeString(w, "p5");
  // 001 11 000 then a 32-bit offset: the widest form, here pointing near the start.
  w.uintBE(0x38, 1);
  w.uintBE(zero, 4);
  writeString(w, "bytes");
  w.uintBE(0x83, 1); // bytes, 3 long
  w.uintBE(0x00ff10, 3);
  writeString(w, "noBytes");
  w.uintBE(0x80, 1); // bytes, empty
  writeString(w, "__proto__");
  writePointer(w, inner);
  return {
    data: w.buf.slice(0, w.len),
    record,
    expected: {
      p2: "zero",
      p3: "past 2048",
      p4: "past 526336",
      p5: "zero",
      bytes: Uint8Array.of(0x00, 0xff, 0x10),
      noBytes: new Uint8Array(0),
      ["__proto__"]: { x: "y" },
    },
  };
}
