/**
 * The data-section decoder on its own: every type as the project's writer stores it,
 * hand-made bytes for what the writer never writes (bytes, every pointer size), and
 * hostile bytes, which must end in a DataSectionError, never a hang, another error
 * or a read outside the section. mmdblookup_test.ts holds it to libmaxminddb.
 */

import assert from "node:assert/strict";
import { LruCache } from "../../../src/base/cache/lru.ts";
import { createDataDecoder, DataSectionError, MAX_VALUES } from "../../../src/data/mmdb/decoder.ts";
import { MAX_DEPTH } from "../../../src/data/mmdb/data_types.ts";
import {
  ByteWriter,
  writeArrayHeader,
  writeMapHeader,
  writePointer,
  writeString,
} from "../../../src/data/mmdb/writer/encode.ts";
import {
  double,
  float,
  int32,
  type MmdbValue,
  uint128,
  uint16,
  uint32,
  uint64,
} from "../../../src/data/mmdb/writer/writer.ts";
import { seededRandom } from "../../_random.ts";
import { build, layout, walk } from "./_fixtures.ts";
import { EVERY_TYPE, expectedPlain, pointerSizesSection } from "./_decoder_fixtures.ts";

/** A store of shared values that keeps nothing: every pointer is decoded again. */
const NOTHING_KEPT = { get: () => undefined, set: () => {} };

/** A decoder over a whole buffer that is nothing but a data section. */
const over = (data: Uint8Array) => createDataDecoder(data, 0, data.length);

/** The decoder of a file's data section and the data offset of `ip`'s record. */
function recordOf(bytes: Uint8Array, ip: string): { decode: (o: number) => unknown; at: number } {
  const { dataStart, dataSize } = layout(bytes);
  const { record, nodeCount } = walk(bytes, ip);
  assert.ok(record > nodeCount, `${ip} has no record`);
  return {
    decode: createDataDecoder(bytes, dataStart, dataStart + dataSize),
    at: record - nodeCount - 16,
  };
}

Deno.test("decodes every type the writer stores, exactly as inserted", () => {
  const bytes = build((w) => w.insertNetwork("1.2.3.0/24", EVERY_TYPE));
  const { decode, at } = recordOf(bytes, "1.2.3.4");
  assert.deepEqual(decode(at), expectedPlain(EVERY_TYPE));
});

Deno.test("values behind pointers are shared, also between records, and stay correct", () => {
  const country = { iso_code: "DE", names: { en: "Germany", de: "Deutschland" } };
  const records: Record<string, MmdbValue>[] = [];
  const bytes = build((w) => {
    for (let i = 0; i < 20; i++) {
      records.push({ city: `City ${i}`, country, registered_country: country, list: [country] });
      w.insertNetwork(`${i + 1}.0.0.0/8`, records[i]!);
    }
  });
  const { dataStart, dataSize } = layout(bytes);
  const decode = createDataDecoder(bytes, dataStart, dataStart + dataSize);
  const decoded = records.map((_, i) => {
    const { record, nodeCount } = walk(bytes, `${i + 1}.1.1.1`);
    return decode(record - nodeCount - 16) as Record<string, unknown>;
  });
  decoded.forEach((d, i) => assert.deepEqual(d, records[i], `record ${i}`));
  // The writer stores the country once, in the first record; every later use points at
  // it, so one object serves all of them (the first record's own copy is decoded in place).
  const first = decoded[0]!.registered_country;
  assert.notEqual(decoded[0]!.country, first);
  for (const d of decoded.slice(1)) {
    assert.equal(d.country, first);
    assert.equal(d.registered_country, first);
    assert.equal((d.list as unknown[])[0], first);
  }
});

Deno.test("any store of shared values gives the same records: none kept, an LRU, the default", () => {
  const bytes = build((w) => {
    for (let i = 0; i < 50; i++) {
      w.insertNetwork(`${i + 1}.0.0.0/8`, { n: i, shared: { a: "x", b: ["y", "z"] }, k: `v${i}` });
    }
  });
  const { dataStart, dataSize } = layout(bytes);
  const stores = [NOTHING_KEPT, new LruCache(1), new LruCache(3), new LruCache(1000), undefined];
  for (const shared of stores) {
    const decode = createDataDecoder(bytes, dataStart, dataStart + dataSize, { shared });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 50; i++) {
        const { record, nodeCount } = walk(bytes, `${i + 1}.2.3.4`);
        assert.deepEqual(decode(record - nodeCount - 16), {
          n: i,
          shared: { a: "x", b: ["y", "z"] },
          k: `v${i}`,
        });
      }
    }
  }
});

Deno.test("pointers of every size (2 to 5 bytes), bytes, and a key named __proto__", () => {
  const { data, record, expected } = pointerSizesSection();
  const decoded = over(data)(record) as Record<string, unknown>;
  assert.deepEqual(decoded, expected);
  // The key is an own property: the object's prototype is untouched.
  assert.equal(Object.getPrototypeOf(decoded), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(decoded, "__proto__")?.value, { x: "y" });
});

Deno.test("integers and floats at their edges, sizes 0 to the most each type allows", () => {
  const w = new ByteWriter(256);
  const put = (...b: number[]) => b.forEach((x) => w.uintBE(x, 1));
  const at: number[] = [];
  const mark = () => at.push(w.len);
  mark(), put(0xa0); // uint16, size 0 → 0
  mark(), put(0xa2, 0xff, 0xff); // uint16 65535
  mark(), put(0xc0); // uint32, size 0
  mark(), put(0xc4, 0xff, 0xff, 0xff, 0xff); // uint32 max
  mark(), put(0x04, 0x01, 0xff, 0xff, 0xff, 0xff); // int32 size 4: -1
  mark(), put(0x03, 0x01, 0xff, 0xff, 0xff); // int32 size 3: no sign, 16777215
  mark(), put(0x04, 0x01, 0x80, 0, 0, 0); // int32 min
  mark(), put(0x00, 0x02); // uint64, size 0 → 0n
  mark(), put(0x05, 0x02, 1, 2, 3, 4, 5); // uint64, 5 bytes
  mark(), put(0x08, 0x02, ...Array(8).fill(0xff)); // uint64 max
  mark(), put(0x10, 0x03, ...Array(16).fill(0xff)); // uint128 max
  mark(), put(0x09, 0x03, 1, 0, 0, 0, 0, 0, 0, 0, 2); // uint128, 9 bytes
  mark(), put(0x04, 0x08, 0x3f, 0xc0, 0, 0); // float 1.5
  mark(), put(0x68, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0); // double +Infinity
  mark(), put(0x68, 0x80, 0, 0, 0, 0, 0, 0, 0); // double -0
  mark(), put(0x00, 0x07, 0x01, 0x07); // boolean false, boolean true
  const decode = over(w.buf.slice(0, w.len));
  assert.deepEqual(at.map((o) => decode(o)), [
    0,
    65535,
    0,
    4294967295,
    -1,
    16777215,
    -2147483648,
    0n,
    0x0102030405n,
    2n ** 64n - 1n,
    2n ** 128n - 1n,
    (1n << 64n) + 2n,
    1.5,
    Infinity,
    -0,
    false,
  ]);
  assert.equal(decode(at.at(-1)! + 2), true);
});

/** Bytes of a data section, given as numbers. */
const section = (...b: number[]) => Uint8Array.from(b);

/** Decoding `data` at `offset` throws a DataSectionError whose message matches. */
function refuses(data: Uint8Array, pattern: RegExp, offset = 0): void {
  assert.throws(() => over(data)(offset), (e: unknown) => {
    assert.ok(e instanceof DataSectionError, `not a DataSectionError: ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("what the format forbids is refused, naming the offset", () => {
  refuses(section(0x20, 0x02, 0x20, 0x00), /offset 2: a pointer to a pointer \(at 0\)/, 2);
  refuses(section(0x20, 0x09), /a pointer to 9, past the end/);
  refuses(section(0x28, 0x01), /a pointer runs past the end/);
  refuses(section(0x45, 0x61, 0x62), /offset 0: a value runs past the end/);
  refuses(section(0x5d), /a size runs past the end/);
  refuses(section(0xa3, 1, 2, 3), /a uint16 of size 3/);
  refuses(section(0xc5, 1, 2, 3, 4, 5), /a uint32 of size 5/);
  refuses(section(0x05, 0x01, 1, 2, 3, 4, 5), /an int32 of size 5/);
  refuses(section(0x09, 0x02, ...Array(9).fill(1)), /a uint64 of size 9/);
  refuses(section(0x11, 0x03, ...Array(17).fill(1)), /a uint128 of size 17/);
  refuses(section(0x64, 0, 0, 0, 0), /a double of size 4/);
  refuses(section(0x08, 0x08, ...Array(8).fill(0)), /a float of size 8/);
  refuses(section(0x02, 0x07), /a boolean of size 2/);
  refuses(section(0x00, 0x05), /a data cache container/);
  refuses(section(0x00, 0x06), /an end marker/);
  refuses(section(0x00, 0x09), /unknown extended type 16/);
  refuses(section(0x00, 0x00), /unknown extended type 7/);
  refuses(section(0x00), /an extended type runs past the end/);
  refuses(section(0xe1, 0xc1, 0x01, 0x41, 0x61), /offset 1: a map key that is not a UTF-8 string/);
  // A key that points at something other than a string.
  refuses(section(0xe0, 0xe1, 0x20, 0x00, 0x41, 0x61), /offset 2: a map key that is not/, 1);
  // Counts the rest of the section cannot hold are refused before anything is allocated.
  refuses(section(0xff, 0xff, 0xff, 0xff), /a map of 16843036 pairs runs past the end/);
  refuses(section(0x1f, 0x04, 0xff, 0xff, 0xff), /an array of 16843036 values runs past/);
  assert.throws(() => over(section(0x40))(1), /offset 1: a record outside the data section/);
  assert.throws(() => over(section(0x40))(-1), DataSectionError);
});

Deno.test("a pointer cycle ends at the nesting limit, not in a loop", () => {
  // Offset 0: a map { k: <pointer to offset 0> }.
  refuses(section(0xe1, 0x41, 0x6b, 0x20, 0x00), /nested deeper than 512 levels/);
  // Arrays nested exactly to the limit decode; one level more does not.
  const nested = (levels: number) => {
    const w = new ByteWriter(levels * 2 + 1);
    for (let i = 0; i < levels; i++) writeArrayHeader(w, 1);
    writeString(w, "bottom");
    return w.buf.slice(0, w.len);
  };
  let value = over(nested(MAX_DEPTH))(0);
  for (let i = 0; i < MAX_DEPTH; i++) value = (value as unknown[])[0];
  assert.equal(value, "bottom");
  refuses(nested(MAX_DEPTH + 1), /nested deeper than 512 levels/);
});

Deno.test("pointers that fan out (each level twice to the next): shared, or stopped by the budget", () => {
  // Level i: { a: <pointer to level i+1>, b: <pointer to level i+1> }; 2^200 paths in all.
  const levels = 200;
  const w = new ByteWriter(levels * 16);
  const starts: number[] = [];
  const pointerAt: number[][] = [];
  for (let i = 0; i < levels; i++) {
    starts.push(w.len);
    writeMapHeader(w, 2);
    const here: number[] = [];
    for (const key of ["a", "b"]) {
      writeString(w, key);
      here.push(w.len);
      writePointer(w, 200_000_000); // a 5-byte pointer, its target patched below
    }
    pointerAt.push(here);
  }
  starts.push(w.len);
  writeString(w, "end");
  const data = w.buf.slice(0, w.len);
  for (let i = 0; i < levels; i++) {
    for (const at of pointerAt[i]!) {
      new DataView(data.buffer).setUint32(at + 1, starts[i + 1]!); // 001 11 000, 32-bit offset
    }
  }
  // Kept values: one decode a level.
  for (const shared of [undefined, new LruCache(levels)]) {
    let level = createDataDecoder(data, 0, data.length, { shared })(0) as Record<string, unknown>;
    for (let i = 0; i < levels - 1; i++) {
      assert.equal(level.a, level.b, `level ${i}`);
      level = level.a as Record<string, unknown>;
    }
    assert.equal(level.a, "end");
  }
  // Nothing kept: the work would double each level; the budget ends it with an error.
  assert.throws(
    () => createDataDecoder(data, 0, data.length, { shared: NOTHING_KEPT })(0),
    (e: unknown) =>
      e instanceof DataSectionError && e.message.includes(`more than ${MAX_VALUES} values`),
  );
});

Deno.test("random and mutated bytes: every offset decodes or throws a DataSectionError", () => {
  const random = seededRandom(0x5eed);
  const byte = () => Math.floor(random() * 256);
  const valid = (() => {
    const bytes = build((w) => w.insertNetwork("1.2.3.0/24", EVERY_TYPE));
    const { dataStart, dataSize } = layout(bytes);
    return bytes.slice(dataStart, dataStart + Math.min(dataSize, 2048));
  })();
  const tryAll = (data: Uint8Array, label: string) => {
    const decode = over(data);
    for (let offset = 0; offset < data.length; offset++) {
      try {
        decode(offset);
      } catch (error) {
        if (!(error instanceof DataSectionError)) {
          throw new Error(`${label}, offset ${offset}: ${error}`, { cause: error });
        }
      }
    }
  };
  for (let i = 0; i < 200; i++) {
    tryAll(Uint8Array.from({ length: 1 + Math.floor(random() * 200) }, byte), `random ${i}`);
  }
  for (let i = 0; i < 40; i++) {
    const data = valid.slice(0, 64 + Math.floor(random() * (valid.length - 64)));
    for (let flips = 1 + Math.floor(random() * 4); flips > 0; flips--) {
      data[Math.floor(random() * data.length)] = byte();
    }
    tryAll(data, `mutated ${i}`);
  }
});

Deno.test("createDataDecoder() refuses bounds outside the bytes", () => {
  assert.throws(() => createDataDecoder(new Uint8Array(4), 2, 1), RangeError);
  assert.throws(() => createDataDecoder(new Uint8Array(4), 0, 5), /runs past the file's end/);
  // A uint16 right at the section's end is read only within the section, not past it.
  const bytes = section(0xa2, 0x01, 0x02, 0x03);
  assert.equal(createDataDecoder(bytes, 0, 3)(0), 0x0102);
  assert.throws(() => createDataDecoder(bytes, 0, 2)(0), /a value runs past the end/);
});

// Keep the writer's explicit types in use here too: a float is stored as binary32.
Deno.test("explicit writer types decode to their JavaScript forms", () => {
  const record = {
    a: uint16(7),
    b: uint32(7),
    c: uint64(7),
    d: uint128(7n),
    e: int32(-7),
    f: float(0.1),
    g: double(0.1),
  };
  const bytes = build((w) => w.insertNetwork("9.0.0.0/8", record));
  const { decode, at } = recordOf(bytes, "9.9.9.9");
  assert.deepEqual(decode(at), { a: 7, b: 7, c: 7n, d: 7n, e: -7, f: Math.fround(0.1), g: 0.1 });
});

Deno.test("strings decode as the standard UTF-8 decoder does, malformed bytes included", () => {
  const reference = new TextDecoder("utf-8", { ignoreBOM: true });
  const cases: number[][] = [
    [0x61, 0x62],
    [0xc3, 0xbc], // ü
    [0xe6, 0x9d, 0xb1, 0xe4, 0xba, 0xac], // 東京
    [0xf0, 0x9f, 0x8e, 0x89], // 🎉 (4 bytes: a surrogate pair)
    [0xef, 0xbb, 0xbf, 0x61], // a byte order mark, kept
    [0xc0, 0x80], // overlong NUL
    [0xc1, 0xbf], // overlong
    [0xe0, 0x80, 0x80], // overlong
    [0xed, 0xa0, 0x80], // a surrogate
    [0xed, 0x9f, 0xbf], // U+D7FF, the last before the surrogates
    [0xee, 0x80, 0x80], // U+E000, the first after them
    [0xc3], // cut short
    [0x61, 0xe6, 0x9d], // cut short
    [0x80, 0x61], // a lone continuation byte
    [0xc3, 0x28], // a lead byte without its continuation
    [0xf5, 0x80, 0x80, 0x80], // beyond U+10FFFF
    [0xff, 0xfe],
    [0x00],
  ];
  const random = seededRandom(0x0f8);
  for (let i = 0; i < 2000; i++) {
    // Mostly bytes that form sequences, so the random strings exercise more than U+FFFD.
    const pick = [0x41, 0x7f, 0x80, 0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xff];
    cases.push(
      Array.from(
        { length: Math.floor(random() * 70) },
        () =>
          random() < 0.5 ? pick[Math.floor(random() * pick.length)]! : Math.floor(random() * 256),
      ),
    );
  }
  for (const body of cases) {
    const w = new ByteWriter(body.length + 4);
    // A utf8_string header for this many bytes, then the bytes as they are.
    writeString(w, "x".repeat(body.length));
    w.buf.set(body, w.len - body.length);
    const data = w.buf.slice(0, w.len);
    assert.equal(over(data)(0), reference.decode(Uint8Array.from(body)), body.join(","));
  }
});
