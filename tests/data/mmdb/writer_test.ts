/** MaxMind DB writer: files written here are read back with mmdb-lib and an independent decoder. */

import { parseIp } from "../../../src/base/ip/parse.ts";
import assert from "node:assert/strict";
import {
  double,
  float,
  int32,
  type MmdbValue,
  MmdbWriter,
  pickRecordSize,
  uint128,
  uint16,
  uint32,
  uint64,
} from "../../../src/data/mmdb/writer/writer.ts";
import {
  build,
  keyOf,
  layout,
  MAX_V4,
  MAX_V6,
  Model,
  open,
  randBig,
  typedMetadata,
  typedRecord,
  v4,
  v6,
  walk,
} from "./_fixtures.ts";
import type { Typed } from "../../_mmdblookup.ts";
import { seededRandom } from "../../_random.ts";

/** Reference CIDR split (greedy, bigint) of [lo, hi] in a `bits`-bit space. */
function cidrs(lo: bigint, hi: bigint, bits: number): { start: bigint; len: number }[] {
  const out: { start: bigint; len: number }[] = [];
  while (lo <= hi) {
    let k = bits;
    while (k > 0 && (lo % (1n << BigInt(k)) !== 0n || lo + (1n << BigInt(k)) - 1n > hi)) k--;
    out.push({ start: lo, len: bits - k });
    lo += 1n << BigInt(k);
  }
  return out;
}

const text = (k: bigint, isV4: boolean) => (isV4 ? v4(k) : v6(k));

/** Checks an edge range inserted alone: both ends of every prefix, and one past each end. */
function checkRange(lo: bigint, hi: bigint, isV4: boolean, checkPrefixes: boolean) {
  const bits = isV4 ? 32 : 128;
  const max = isV4 ? MAX_V4 : MAX_V6;
  const bytes = build((w) => w.insertRange(text(lo, isV4), text(hi, isV4), { r: "x" }));
  const r = open(bytes);
  const model = new Model<MmdbValue>();
  model.add(lo, hi, { r: "x" });
  for (const { start, len } of cidrs(lo, hi, bits)) {
    const end = start + (1n << BigInt(bits - len)) - 1n;
    for (const k of [start, end]) {
      const [rec, prefix] = r.getWithPrefixLength(text(k, isV4));
      assert.deepEqual(rec, { r: "x" }, `${text(k, isV4)} in ${text(lo, isV4)}-${text(hi, isV4)}`);
      // The root is always a node, so a whole-space IPv6 insert reads back as /1.
      const want = isV4 ? len : Math.max(len, 1);
      if (checkPrefixes) assert.equal(prefix, want, `prefix of ${text(k, isV4)}`);
    }
  }
  for (const k of [lo - 1n, hi + 1n]) {
    if (k < 0n || k > max) continue;
    assert.deepEqual(r.get(text(k, isV4)), model.get(k), `outside: ${text(k, isV4)}`);
  }
}

Deno.test("IPv4 edge ranges split into the right prefixes", () => {
  const cases: [string, string][] = [
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.255", "255.255.255.255"],
    ["0.0.0.0", "255.255.255.255"],
    ["0.0.0.1", "255.255.255.254"],
    ["0.0.0.0", "127.255.255.255"],
    ["128.0.0.0", "255.255.255.255"],
    ["10.0.0.255", "10.0.1.0"],
    ["1.2.3.4", "1.2.3.4"],
    ["1.0.0.1", "223.255.255.0"],
    ["192.168.0.0", "192.168.255.255"],
  ];
  for (const [a, b] of cases) checkRange(keyOf(a), keyOf(b), true, true);
});

Deno.test("IPv4 whole space: every address, prefix 0, also via ::ffff: and ::", () => {
  const r = open(build((w) => w.insertRange("0.0.0.0", "255.255.255.255", "all")));
  for (const ip of ["0.0.0.0", "1.2.3.4", "255.255.255.255"]) {
    assert.deepEqual(r.getWithPrefixLength(ip), ["all", 0]);
  }
  assert.deepEqual(r.getWithPrefixLength("::ffff:1.2.3.4"), ["all", 96]);
  assert.deepEqual(r.getWithPrefixLength("::1.2.3.4"), ["all", 96]);
  assert.equal(r.get("2001:db8::1"), null);
  assert.equal(r.get("::1:0:0:0"), null);
});

Deno.test("IPv6 edge ranges split into the right prefixes", () => {
  const cases: [string, string, boolean][] = [
    ["::", "::", true],
    ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true],
    ["::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true],
    ["::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", false],
    ["8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true],
    ["2001:db8::ffff", "2001:db8::1:0", true],
    ["2001:db8::1", "2001:db9::", true],
    ["2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", true],
    ["1::", "fffe::", false], // split by the 2001::/32 and 2002::/16 aliases
    ["2001:db8::5", "2001:db8::5", true],
  ];
  // Prefix lengths are only checked away from ::/96 and the networks aliased to it.
  for (const [a, b, prefixes] of cases) checkRange(keyOf(a), keyOf(b), false, prefixes);
});

Deno.test("IPv6 whole space covers IPv4 too, and collapses to the root", () => {
  const bytes = build((w) => w.insertRange("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1));
  const r = open(bytes);
  assert.equal(r.metadata.nodeCount, 1);
  // The root is always a node: IPv6 reads back as /1; IPv4 (whose start is that leaf) as /0.
  for (const ip of ["::", "::ffff:8.8.8.8", "2002::", "ffff::1"]) {
    assert.deepEqual(r.getWithPrefixLength(ip), [1, 1], ip);
  }
  assert.deepEqual(r.getWithPrefixLength("1.2.3.4"), [1, 0]);
  assert.deepEqual(build((w) => w.insertNetwork("::/0", 1)), bytes);
});

Deno.test("mixed IPv4 and IPv6 in one file", () => {
  const r = open(build((w) => {
    w.insertNetwork("1.1.1.0/24", { asn: 13335 });
    w.insertNetwork("2606:4700::/32", { asn: 13335, v: 6 });
    w.insertRange("8.8.8.0", "8.8.8.255", { asn: 15169 });
    w.insertRange("2001:4860::", "2001:4860:ffff:ffff:ffff:ffff:ffff:ffff", { asn: 15169, v: 6 });
  }));
  assert.deepEqual(r.get("1.1.1.1"), { asn: 13335 });
  assert.deepEqual(r.get("::ffff:1.1.1.1"), { asn: 13335 });
  assert.deepEqual(r.get("2606:4700::1111"), { asn: 13335, v: 6 });
  assert.deepEqual(r.get("8.8.4.4"), null);
  assert.deepEqual(r.getWithPrefixLength("8.8.8.8"), [{ asn: 15169 }, 24]);
  assert.deepEqual(r.getWithPrefixLength("2001:4860:4860::8888"), [{ asn: 15169, v: 6 }, 32]);
  assert.equal(r.get("2606:4701::"), null);
  assert.equal(r.get("1.1.2.0"), null);
});

/** Random ranges (both families, with overlaps) against the brute-force model. */
function randomCase(seed: number, recordSize?: 24 | 28 | 32) {
  const rand = seededRandom(seed);
  const model = new Model<MmdbValue>();
  const pool: MmdbValue[] = Array.from({ length: 25 }, (_, i) => ({ id: i, name: `org ${i % 7}` }));
  const probes: bigint[] = [];
  const w = new MmdbWriter({ databaseType: "Rand", recordSize });
  for (let i = 0; i < 250; i++) {
    const value = pool[Math.floor(rand() * pool.length)]!;
    const kind = rand();
    let lo: bigint, hi: bigint, isV4: boolean;
    if (kind < 0.5) {
      isV4 = true;
      lo = randBig(rand, 32);
      const span = [1n, 256n, 65536n, 1n << 24n][Math.floor(rand() * 4)]!;
      hi = lo + randBig(rand, 64) % span;
      if (hi > MAX_V4) hi = MAX_V4;
    } else {
      isV4 = false;
      // Mostly 2000::/3, some near ::/96 and the ::ffff:0:0/96 alias, a few anywhere.
      const region = rand();
      lo = region < 0.6
        ? (1n << 125n) | randBig(rand, 125) >> BigInt(Math.floor(rand() * 100))
        : region < 0.9
        ? (randBig(rand, 2) << 32n) | (rand() < 0.5 ? 0xffffn << 32n : 0n) | randBig(rand, 32)
        : randBig(rand, 128);
      const span = 1n << BigInt(Math.floor(rand() * 120));
      hi = lo + randBig(rand, 128) % span;
      if (hi > MAX_V6) hi = MAX_V6;
    }
    w.insertRange(text(lo, isV4), text(hi, isV4), value);
    model.add(lo, hi, value);
    for (const k of [lo - 1n, lo, lo + 1n, hi - 1n, hi, hi + 1n]) {
      if (k >= 0n && k <= (isV4 ? MAX_V4 : MAX_V6)) probes.push(isV4 ? k | (1n << 200n) : k);
    }
  }
  for (let i = 0; i < 300; i++) probes.push(randBig(rand, 32) | (1n << 200n), randBig(rand, 128));
  const bytes = w.toBytes();
  const r = open(bytes);
  if (recordSize) assert.equal(r.metadata.recordSize, recordSize);
  for (const p of probes) {
    // Bit 200 marks an IPv4 probe; those are also looked up as ::ffff:a.b.c.d and
    // through the 6to4 and Teredo forms that embed it.
    const isV4 = p >> 200n === 1n;
    const k = p & MAX_V6;
    const ips = isV4
      ? [
        v4(k),
        `::ffff:${v4(k)}`,
        v6((0x2002n << 112n) | (k << 80n) | (k & 0xffffn)),
        v6((0x20010000n << 96n) | (k << 64n) | 0xabcdn),
      ]
      : [v6(k)];
    for (const ip of ips) {
      const [rec, prefix] = r.getWithPrefixLength(ip);
      const expected = model.get(isV4 ? k : keyOf(ip));
      assert.deepEqual(rec, expected, `seed ${seed}: ${ip}`);
      // The reported network must be uniform in the model at both of its ends.
      const full = isV4 && !ip.includes(":") ? prefix + 96 : prefix;
      const key = keyOf(ip);
      const host = (1n << BigInt(128 - full)) - 1n;
      const start = key & ~host & MAX_V6;
      assert.deepEqual(model.get(start), expected, `seed ${seed}: start of ${ip}/${prefix}`);
      assert.deepEqual(model.get(start | host), expected, `seed ${seed}: end of ${ip}/${prefix}`);
    }
  }
  return bytes;
}

Deno.test("random ranges with overlaps match a brute-force model (later insert wins)", () => {
  for (let seed = 1; seed <= 6; seed++) randomCase(seed);
});

Deno.test("overlap rule: later insert wins, smaller inside larger splits it", () => {
  const r = open(build((w) => {
    w.insertNetwork("10.0.0.0/8", "A");
    w.insertNetwork("10.1.0.0/16", "B"); // splits A
    w.insertNetwork("10.1.2.0/24", "C"); // splits B
    w.insertNetwork("20.0.0.0/24", "D");
    w.insertNetwork("20.0.0.0/16", "E"); // replaces D entirely
    w.insertRange("30.0.0.0", "30.0.0.255", "F");
    w.insertRange("30.0.0.100", "30.0.1.10", "G"); // partial overlap
  }));
  assert.deepEqual(r.getWithPrefixLength("10.0.0.1"), ["A", 16]);
  assert.deepEqual(r.getWithPrefixLength("10.200.0.1"), ["A", 9]);
  assert.deepEqual(r.getWithPrefixLength("10.1.0.1"), ["B", 23]);
  assert.deepEqual(r.getWithPrefixLength("10.1.3.1"), ["B", 24]);
  assert.deepEqual(r.getWithPrefixLength("10.1.2.200"), ["C", 24]);
  assert.deepEqual(r.getWithPrefixLength("20.0.0.5"), ["E", 16]);
  assert.equal(r.get("30.0.0.99"), "F");
  assert.equal(r.get("30.0.0.100"), "G");
  assert.equal(r.get("30.0.1.10"), "G");
  assert.equal(r.get("30.0.1.11"), null);
  // Re-inserting the original value over the hole merges the network back.
  const r2 = open(build((w) => {
    w.insertNetwork("10.0.0.0/8", { v: "A" });
    w.insertNetwork("10.1.0.0/16", { v: "B" });
    w.insertNetwork("10.1.0.0/16", { v: "A" });
  }));
  assert.deepEqual(r2.getWithPrefixLength("10.1.2.3"), [{ v: "A" }, 8]);
});

const ALL_TYPES: Record<string, MmdbValue> = {
  str: "hello",
  empty: "",
  unicode: "Zürich 東京 🎉 ñ",
  u16: uint16(65535),
  u16zero: uint16(0),
  u32: uint32(4294967295),
  u32def: 7,
  u64: uint64(2n ** 64n - 1n),
  u64num: uint64(12345),
  u64def: 2 ** 40,
  u128: uint128(2n ** 128n - 1n),
  u128small: uint128(5n),
  bigdef: 2n ** 100n,
  big64: 5n,
  i32min: int32(-2147483648),
  i32max: int32(2147483647),
  i32pos: int32(300),
  negdef: -5,
  f: float(1.1),
  fneg: float(-0.25),
  d: double(3.141592653589793),
  dint: double(2),
  ddef: 0.5,
  dneg: -1e-300,
  t: true,
  fl: false,
  arr: [1, "a", [], {}, [2, [3]]],
  nested: { a: { b: { c: [true, { d: "deep" }] } } },
  emptyMap: {},
  emptyArr: [],
  zero: 0,
  bigneg: -(2 ** 31) - 1,
  huge: 2 ** 64,
};

const EXPECTED_TYPES: Record<string, string> = {
  str: "utf8_string",
  empty: "utf8_string",
  unicode: "utf8_string",
  u16: "uint16",
  u16zero: "uint16",
  u32: "uint32",
  u32def: "uint32",
  u64: "uint64",
  u64num: "uint64",
  u64def: "uint64",
  u128: "uint128",
  u128small: "uint128",
  bigdef: "uint128",
  big64: "uint64",
  i32min: "int32",
  i32max: "int32",
  i32pos: "int32",
  negdef: "int32",
  f: "float",
  fneg: "float",
  d: "double",
  dint: "double",
  ddef: "double",
  dneg: "double",
  t: "boolean",
  fl: "boolean",
  arr: "array",
  nested: "map",
  emptyMap: "map",
  emptyArr: "array",
  zero: "uint32",
  bigneg: "double",
  huge: "double",
};

Deno.test("every data type round-trips (mmdb-lib values, exact stored types)", () => {
  const bytes = build((w) => w.insertNetwork("1.2.3.0/24", ALL_TYPES));
  const got = open(bytes).get("1.2.3.4");
  assert.deepEqual(got, {
    ...ALL_TYPES,
    u16: 65535,
    u16zero: 0,
    u32: 4294967295,
    u64: 2n ** 64n - 1n,
    u64num: 12345n,
    u64def: 2n ** 40n,
    u128: 2n ** 128n - 1n,
    u128small: 5n,
    i32min: -2147483648,
    i32max: 2147483647,
    i32pos: 300,
    f: Math.fround(1.1),
    fneg: -0.25,
    d: 3.141592653589793,
    dint: 2,
  });
  assert.ok(Math.abs(got.f - 1.1) < 1e-6);
  const typed = typedRecord(bytes, "1.2.3.4")!;
  assert.equal(typed.t, "map");
  const entries = typed.v as [string, Typed][];
  assert.deepEqual(entries.map(([k]) => k), Object.keys(ALL_TYPES), "key order kept");
  for (const [k, v] of entries) assert.equal(v.t, EXPECTED_TYPES[k], k);
});

Deno.test("string, map and array length encodings (29 / 285 / 65821 boundaries)", () => {
  const lengths = [0, 1, 28, 29, 30, 284, 285, 286, 65_820, 65_821, 65_822, 200_000];
  const values: MmdbValue[] = [];
  for (const n of lengths) {
    values.push("a".repeat(n), "é".repeat(Math.ceil(n / 2)) + "x".repeat(n % 2));
  }
  values.push("🎉".repeat(20_000));
  for (const n of [29, 285, 300, 70_000]) {
    values.push(Array.from({ length: n }, (_, i) => i));
    values.push(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i % 3])));
  }
  const bytes = build((w) => values.forEach((v, i) => w.insertNetwork(v4(i * 256) + "/24", v)));
  const r = open(bytes);
  values.forEach((v, i) => assert.deepEqual(r.get(v4(i * 256 + 1)), v, `value ${i}`));
});

Deno.test("identical records are stored once", () => {
  const one = build((w) => w.insertNetwork("1.0.0.0/24", { asn: 64500, org: "Example Org" }));
  const many = build((w) => {
    for (let i = 0; i < 1000; i++) {
      w.insertNetwork(`${1 + (i >> 8)}.${i & 255}.0.0/24`, { asn: 64500, org: "Example Org" });
    }
  });
  assert.equal(layout(many).dataSize, layout(one).dataSize);
  assert.deepEqual(open(many).get("3.231.0.1"), { asn: 64500, org: "Example Org" });
});

Deno.test("nested values and keys are written once and shared by pointers", () => {
  const country = { iso_code: "DE", names: { en: "Germany", de: "Deutschland", fr: "Allemagne" } };
  const cities = Array.from({ length: 1000 }, (_, i) => ({
    city: { geoname_id: 100000 + i, names: { en: `City ${i}` } },
    country: structuredClone(country),
    registered_country: structuredClone(country),
  }));
  const bytes = build((w) => cities.forEach((c, i) => w.insertNetwork(v4(i * 256) + "/24", c)));
  const inlineCountry = new TextEncoder().encode(JSON.stringify(country)).length;
  assert.ok(layout(bytes).dataSize < 1000 * inlineCountry, `data ${layout(bytes).dataSize}`);
  const r = open(bytes);
  for (const i of [0, 1, 500, 999]) assert.deepEqual(r.get(v4(i * 256 + 7)), cities[i]);
  // Keys and strings occur once in the whole file.
  const hay = new TextDecoder("latin1").decode(bytes);
  for (const s of ["registered_country", "geoname_id", "Deutschland"]) {
    assert.equal(hay.split(s).length - 1, 1, s);
  }
  const stats = { pointers: 0 };
  typedRecord(bytes, v4(999 * 256), stats);
  assert.ok(stats.pointers >= 3, `pointers followed: ${stats.pointers}`);
});

Deno.test("pointers of every size: targets past 2048, 526336 and 134744064", () => {
  // Tree (pre-)order is address order here, so values are written in this order.
  const bytes = build((w) => {
    w.insertNetwork("1.0.0.0/8", "f".repeat(3000));
    w.insertNetwork("2.0.0.0/8", { a: "alpha-value" });
    w.insertNetwork("3.0.0.0/8", "g".repeat(600_000));
    w.insertNetwork("4.0.0.0/8", { b: "beta-value" });
    for (let i = 0; i < 9; i++) w.insertNetwork(`${5 + i}.0.0.0/8`, `${i}`.repeat(15_000_000));
    w.insertNetwork("14.0.0.0/8", { c: "gamma-value" });
    w.insertNetwork("20.0.0.0/8", { a: "alpha-value", b: "beta-value", c: "gamma-value" });
  });
  assert.ok(layout(bytes).dataSize > 134_744_064);
  const r = open(bytes);
  assert.deepEqual(r.get("20.1.1.1"), { a: "alpha-value", b: "beta-value", c: "gamma-value" });
  assert.deepEqual(r.get("14.1.1.1"), { c: "gamma-value" });
  const stats = { pointers: 0 };
  typedRecord(bytes, "20.1.1.1", stats);
  assert.equal(stats.pointers, 3, "the three values (keys are shorter inline)");
  // The 20/8 record is the last value written: { a: <3-byte pointer>, b: <4>, c: <5> }.
  const { record, nodeCount } = walk(bytes, "20.1.1.1");
  const { dataStart, dataSize } = layout(bytes);
  const rec = bytes.subarray(dataStart + record - nodeCount - 16, dataStart + dataSize);
  assert.equal(rec.length, 1 + 3 * 2 + 3 + 4 + 5);
  assert.deepEqual([rec[3]! >> 3, rec[8]! >> 3, rec[14]! >> 3], [0b00101, 0b00110, 0b00111]);
});

Deno.test("metadata map: every field with the spec's types", () => {
  const bytes = build((w) => w.insertNetwork("1.2.3.0/24", "x"), {
    databaseType: "GeoLite2-ASN",
    languages: ["en", "de"],
    description: { en: "ASN data", de: "ASN-Daten" },
    buildEpoch: 1_700_000_123,
  });
  const m = typedMetadata(bytes);
  const r = open(bytes);
  assert.deepEqual(m.binary_format_major_version, { t: "uint16", v: 2 });
  assert.deepEqual(m.binary_format_minor_version, { t: "uint16", v: 0 });
  assert.deepEqual(m.build_epoch, { t: "uint64", v: 1_700_000_123n });
  assert.deepEqual(m.database_type, { t: "utf8_string", v: "GeoLite2-ASN" });
  assert.deepEqual(m.ip_version, { t: "uint16", v: 6 });
  assert.deepEqual(m.node_count, { t: "uint32", v: r.metadata.nodeCount });
  assert.deepEqual(m.record_size, { t: "uint16", v: 24 });
  assert.deepEqual(m.languages, {
    t: "array",
    v: [{ t: "utf8_string", v: "en" }, { t: "utf8_string", v: "de" }],
  });
  assert.deepEqual(m.description, {
    t: "map",
    v: [["en", { t: "utf8_string", v: "ASN data" }], ["de", { t: "utf8_string", v: "ASN-Daten" }]],
  });
  assert.equal(r.metadata.ipVersion, 6);
  assert.equal(r.metadata.buildEpoch.getTime(), 1_700_000_123_000);
  assert.equal(r.metadata.databaseType, "GeoLite2-ASN");
  const { treeSize } = layout(bytes);
  assert.equal(treeSize, r.metadata.searchTreeSize);
  assert.deepEqual([...bytes.subarray(treeSize, treeSize + 16)], new Array(16).fill(0));
  // Defaults.
  const d = open(new MmdbWriter({ databaseType: "Only-Type" }).toBytes()).metadata;
  assert.deepEqual(d.description, { en: "Only-Type" });
  assert.deepEqual(d.languages, []);
  assert.ok(Math.abs(d.buildEpoch.getTime() - Date.now()) < 60_000);
});

Deno.test("forced record sizes 24/28/32 read back correctly", () => {
  for (const size of [24, 28, 32] as const) {
    const bytes = randomCase(100 + size, size);
    assert.equal(typedMetadata(bytes).record_size!.v, size);
    assert.equal(open(bytes).metadata.nodeByteSize, size / 4);
  }
});

Deno.test("record size grows with node count + data size", () => {
  assert.equal(pickRecordSize(1, 0), 24);
  assert.equal(pickRecordSize(2 ** 24 - 17, 0), 24);
  assert.equal(pickRecordSize(2 ** 24 - 16, 0), 28);
  assert.equal(pickRecordSize(1000, 2 ** 24), 28);
  assert.equal(pickRecordSize(2 ** 28, 0), 32);
  assert.equal(pickRecordSize(2 ** 20, 2 ** 31), 32);
  assert.throws(() => pickRecordSize(2 ** 32, 0), /too large/);
  // A real file whose data section pushes record values past 2^24: 28 bits are picked,
  // and the high nibbles in the 28-bit middle byte are exercised.
  const bigString = "z".repeat(16_800_000);
  const fill = (w: MmdbWriter) => {
    w.insertNetwork("0.0.0.0/8", bigString);
    for (let i = 1; i < 40; i++) w.insertNetwork(`${i}.0.0.0/8`, { n: i });
    w.insertNetwork("2001:db8::/32", { v6: true });
  };
  const auto = build(fill);
  assert.equal(open(auto).metadata.recordSize, 28);
  assert.throws(() => build(fill, { recordSize: 24 }), /recordSize 24 is too small/);
  for (const bytes of [auto, build(fill, { recordSize: 32 })]) {
    const r = open(bytes);
    assert.equal(r.get("0.1.2.3"), bigString);
    for (let i = 1; i < 40; i++) assert.deepEqual(r.get(`${i}.9.9.9`), { n: i });
    assert.deepEqual(r.get("2001:db8::1"), { v6: true });
    assert.ok(walk(bytes, "39.0.0.1").record > 2 ** 24);
  }
});

Deno.test("getWithPrefixLength gives the inserted network's prefix length", () => {
  const nets = [
    "10.0.0.0/8",
    "192.168.1.0/24",
    "192.168.2.128/25",
    "8.8.8.8/32",
    "100.64.0.0/10",
    "128.0.0.0/2",
    "2001:db8::/32",
    "2400:cb00::/32",
    "2606:4700:4700::1111/128",
    "fe80::/10",
    "8000::/2",
    "2a00::/12",
    "3000::/4",
  ];
  const r = open(build((w) => nets.forEach((n, i) => w.insertNetwork(n, { i }))));
  nets.forEach((n, i) => {
    const [addr, len] = n.split("/") as [string, string];
    const isV4 = !addr.includes(":");
    const bits = isV4 ? 32 : 128;
    const start = keyOf(addr);
    const end = start + (1n << BigInt(bits - Number(len))) - 1n;
    for (const k of [start, end, start + (end - start) / 3n]) {
      assert.deepEqual(r.getWithPrefixLength(text(k, isV4)), [{ i }, Number(len)], n);
    }
  });
  assert.deepEqual(r.getWithPrefixLength("::ffff:10.1.2.3"), [{ i: 0 }, 104]);
});

Deno.test("::ffff:0:0/96 aliases IPv4; IPv6 inserts there map to IPv4", () => {
  const r = open(build((w) => {
    w.insertNetwork("::ffff:1.2.3.0/120", "mapped");
    w.insertRange("::fffe:ffff:ffff", "::ffff:0.0.0.5", "crossing");
    w.insertNetwork("5.6.7.0/24", "plain");
  }));
  assert.deepEqual(r.getWithPrefixLength("1.2.3.4"), ["mapped", 24]);
  assert.deepEqual(r.getWithPrefixLength("::ffff:1.2.3.4"), ["mapped", 120]);
  assert.equal(r.get("::ffff:5.6.7.8"), "plain");
  assert.equal(r.get("0.0.0.5"), "crossing");
  assert.equal(r.get("0.0.0.6"), null);
  assert.equal(r.get("::fffe:ffff:ffff"), "crossing");
  assert.equal(r.get("::fffe:ffff:fffe"), null);
});

Deno.test("2002::/16 (6to4) and 2001::/32 (Teredo) read the IPv4 address they embed", () => {
  const r = open(build((w) => {
    w.insertNetwork("1.2.3.0/24", "v4");
    w.insertNetwork("5.6.0.0/16", "other");
    // A real ASN table lists both under the relays' AS: the alias wins there.
    w.insertNetwork("2000::/3", "global");
    w.insertNetwork("2002::/16", "relays");
    w.insertNetwork("2001::/32", "relays");
    w.insertNetwork("2002:102:304::/48", "direct");
  }));
  // 6to4: bits 16-47 are the IPv4 address; the prefix is 16 + the IPv4 prefix.
  assert.deepEqual(r.getWithPrefixLength("2002:102:304::1"), ["v4", 40]);
  assert.deepEqual(r.getWithPrefixLength("2002:102:3ff:ffff::"), ["v4", 40]);
  assert.deepEqual(r.getWithPrefixLength("2002:506:708::"), ["other", 32]);
  assert.equal(r.get("2002:909:909::"), null);
  // Teredo: bits 32-63 are the Teredo server's IPv4 address; the prefix is 32 + its prefix.
  assert.deepEqual(r.getWithPrefixLength("2001:0:102:304:8000:f227:bef7:ff7e"), ["v4", 56]);
  assert.deepEqual(r.getWithPrefixLength("2001:0:506:708::"), ["other", 48]);
  assert.equal(r.get("2001:0:909:909::"), null);
  // Right outside the aliases the IPv6 insert holds.
  for (const ip of ["2001:1::", "2000:ffff::", "2003::", "2001:0:0:0:0:0:0:0"]) {
    assert.equal(r.get(ip), ip === "2001:0:0:0:0:0:0:0" ? null : "global", ip);
  }
  assert.equal(r.get("2001::1"), null); // 2001:0:0.0.0.0 embeds 0.0.0.0
});

Deno.test("empty database is valid and finds nothing", () => {
  const bytes = new MmdbWriter({ databaseType: "Empty" }).toBytes();
  const r = open(bytes);
  assert.equal(r.metadata.nodeCount, 1);
  for (const ip of ["0.0.0.0", "1.2.3.4", "::", "::ffff:1.2.3.4", "2001:db8::1"]) {
    assert.equal(r.get(ip), null);
  }
});

Deno.test("toBytes is repeatable and the writer stays usable afterwards", () => {
  const w = new MmdbWriter({ databaseType: "Again", buildEpoch: 1 });
  w.insertNetwork("1.0.0.0/8", "one");
  const a = w.toBytes();
  assert.deepEqual(w.toBytes(), a);
  // Replace the whole IPv4 subtree the ::ffff: alias pointed at.
  w.insertNetwork("0.0.0.0/0", "all");
  w.insertNetwork("2.0.0.0/8", "two");
  const r = open(w.toBytes());
  assert.equal(r.get("1.2.3.4"), "all");
  assert.equal(r.get("::ffff:1.2.3.4"), "all");
  assert.equal(r.get("::ffff:2.2.3.4"), "two");
  assert.equal(open(a).get("::ffff:1.2.3.4"), "one");
});

Deno.test("invalid input throws an Error naming the input", () => {
  const w = new MmdbWriter({ databaseType: "Bad" });
  const badNetworks = [
    "1.2.3.0/33",
    "1.2.3.4/24",
    "1.2.3",
    "1.2.3.256",
    "01.2.3.4",
    "1.2.3.4.5",
    "1.2.3.0/",
    "1.2.3.0/-1",
    "1.2.3.0/08",
    "1.2.3.0/24/1",
    "2001:db8::/129",
    "2001:db8::1/64",
    "2001:db8:::1",
    "2001:db8::g",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "1::2::3",
    "12345::",
    "fe80::1%eth0",
    "",
    "abc",
    " 1.2.3.4",
    "1.2.3.4 ",
  ];
  for (const n of badNetworks) {
    assert.throws(
      () => w.insertNetwork(n, 1),
      (e: Error) => e.message.includes(JSON.stringify(n)),
      n,
    );
  }
  const badRanges: [string, string][] = [
    ["1.2.3.5", "1.2.3.4"],
    ["1.2.3.4", "::1"],
    ["::ffff:1.2.3.4", "1.2.3.5"],
    ["x", "1.2.3.4"],
    ["1.2.3.4", "1.2.3.999"],
    ["2001:db8::2", "2001:db8::1"],
  ];
  for (const [a, b] of badRanges) {
    assert.throws(
      () => w.insertRange(a, b, 1),
      (e: Error) => e.message.includes(JSON.stringify(a)) && e.message.includes(JSON.stringify(b)),
      `${a} - ${b}`,
    );
  }
  const cyclic: Record<string, MmdbValue> = {};
  cyclic.self = cyclic;
  const badData: unknown[] = [
    null,
    undefined,
    { a: undefined },
    { a: { b: [1, null] } },
    new Date(0),
    new Map(),
    -1n,
    2n ** 128n,
    Symbol("s"),
    () => 1,
    cyclic,
    "\ud800",
    "é".repeat(8_500_000),
  ];
  for (const d of badData) {
    assert.throws(
      () => w.insertNetwork("9.9.9.0/24", d as MmdbValue),
      (e: Error) => e.message.includes('"9.9.9.0/24"') && e.message.includes("invalid data"),
      String(typeof d),
    );
  }
  assert.throws(
    () => w.insertNetwork("9.9.9.0/24", { a: { b: [1, null] } } as unknown as MmdbValue),
    /at \.a\.b\[1\]/,
  );
  assert.throws(() => uint16(70000), /uint16\(70000\)/);
  assert.throws(() => uint32(-1), /uint32\(-1\)/);
  assert.throws(() => uint32(1.5), /uint32\(1\.5\)/);
  assert.throws(() => int32(2 ** 31), /int32\(2147483648\)/);
  assert.throws(() => uint64(-1), /uint64\(-1\)/);
  assert.throws(() => uint64(2n ** 64n), /uint64/);
  assert.throws(() => uint128(-1n), /uint128\(-1\)/);
  assert.throws(() => new MmdbWriter({ databaseType: "" }), /databaseType/);
  assert.throws(() => new MmdbWriter({ databaseType: "X", recordSize: 16 as 24 }), /recordSize 16/);
  assert.throws(() => new MmdbWriter({ databaseType: "X", buildEpoch: -1 }), /buildEpoch -1/);
  // Nothing above reached the tree.
  assert.equal(open(w.toBytes()).metadata.nodeCount, 1);
});

Deno.test("the writer accepts exactly the addresses the API accepts (one parser)", () => {
  const inputs = [
    "1.2.3.4",
    "255.255.255.255",
    "::",
    "::1.2.3.4",
    "::ffff:1.2.3.4",
    "FFFF::",
    "1:2:3:4:5:6:7::",
    "1:2:3:4:5:6:1.2.3.4",
    "0000:0000:0000:0000:0000:0000:0000:0000",
    "1.2.3.04",
    "256.0.0.0",
    "1.2.3.4.",
    "[::1]",
    "fe80::1%eth0",
    "1::2::",
    "::1:",
    "1:2:3:4:5:6:7:1.2.3.4",
    "00000::",
    "0x1.2.3.4",
    "١.٢.٣.٤",
    " 1.2.3.4",
    "1.2.3.4\n",
    "a".repeat(50),
  ];
  for (const text of inputs) {
    let apiAccepts = true;
    try {
      parseIp(text);
    } catch {
      apiAccepts = false;
    }
    const w = new MmdbWriter({ databaseType: "Agree" });
    let writerAccepts = true;
    try {
      w.insertNetwork(text, 1);
      w.insertRange(text, text, 1);
    } catch (error) {
      writerAccepts = false;
      assert.ok((error as Error).message.includes(JSON.stringify(text)), text);
    }
    assert.equal(writerAccepts, apiAccepts, JSON.stringify(text));
  }
});
