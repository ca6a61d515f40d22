/**
 * MaxMind DB writer interop: files written here are read with libmaxminddb's `mmdblookup`.
 * Skipped (visibly) when mmdblookup is not installed; CI installs it (Debian mmdb-bin).
 */

import assert from "node:assert/strict";
import {
  double,
  float,
  int32,
  type MmdbValue,
  MmdbWriter,
  TypedValue,
  uint128,
  uint16,
  uint32,
  uint64,
} from "../../../src/data/mmdb/writer/writer.ts";
import { build, keyOf, MAX_V4, MAX_V6, Model, open, randBig, v4, v6 } from "./_fixtures.ts";
import {
  MMDBLOOKUP_MISSING,
  mmdblookupAvailable,
  runMmdblookup,
  type Typed,
} from "../../_mmdblookup.ts";
import { seededRandom } from "../../_random.ts";
import { ignoredName } from "../../_skip.ts";

const available = mmdblookupAvailable();
const missing = available ? null : MMDBLOOKUP_MISSING;

/** Runs the test body with the database in a temp file. */
function withFile(bytes: Uint8Array, fn: (file: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const file = await Deno.makeTempFile({ prefix: "mmdb-writer-", suffix: ".mmdb" });
    try {
      await Deno.writeFile(file, bytes);
      await fn(file);
    } finally {
      await Deno.remove(file);
    }
  };
}

/** Looks `ip` up with --verbose: the typed record (null when not found) and the prefix length. */
async function lookup(file: string, ip: string): Promise<{ value: Typed | null; prefix: number }> {
  const { value, prefixLength } = await runMmdblookup(file, ip, { verbose: true });
  assert.notEqual(value, undefined, ip); // no path was given
  assert.ok(prefixLength !== null, ip);
  return { value: value ?? null, prefix: prefixLength };
}

/** The stored form of an inserted value: the default mapping re-stated independently. */
function expected(v: MmdbValue): Typed {
  if (v instanceof TypedValue) {
    const t = v.type;
    if (t === "uint64" || t === "uint128") return { t, v: BigInt(v.value) };
    if (t === "float") return { t, v: Math.fround(Number(v.value)) };
    return { t, v: Number(v.value) };
  }
  if (typeof v === "string") return { t: "utf8_string", v };
  if (typeof v === "boolean") return { t: "boolean", v };
  if (typeof v === "bigint") return { t: v < 2n ** 64n ? "uint64" : "uint128", v };
  if (typeof v === "number") {
    if (!Number.isInteger(v)) return { t: "double", v };
    if (v >= 0 && v < 2 ** 32) return { t: "uint32", v };
    if (v >= 2 ** 32 && v < 2 ** 64) return { t: "uint64", v: BigInt(v) };
    if (v < 0 && v >= -(2 ** 31)) return { t: "int32", v };
    return { t: "double", v };
  }
  if (Array.isArray(v)) return { t: "array", v: v.map(expected) };
  return { t: "map", v: Object.entries(v).map(([k, x]) => [k, expected(x)]) };
}

function assertSame(got: Typed, want: Typed, path: string): void {
  assert.equal(got.t, want.t, `${path}: type`);
  if (got.t === "map") {
    const g = got.v as [string, Typed][];
    const w = want.v as [string, Typed][];
    assert.deepEqual(g.map(([k]) => k), w.map(([k]) => k), `${path}: keys`);
    g.forEach(([k, v], i) => assertSame(v, w[i]![1], `${path}.${k}`));
  } else if (got.t === "array") {
    const g = got.v as Typed[];
    const w = want.v as Typed[];
    assert.equal(g.length, w.length, `${path}: length`);
    g.forEach((v, i) => assertSame(v, w[i]!, `${path}[${i}]`));
  } else if (got.t === "double" || got.t === "float") {
    // mmdblookup prints "%f": 6 decimals.
    const [g, w] = [got.v as number, want.v as number];
    assert.ok(Math.abs(g - w) <= 5.1e-7 + 1e-12 * Math.abs(w), `${path}: ${g} vs ${w}`);
  } else {
    assert.deepEqual(got.v, want.v, path);
  }
}

const RECORD: Record<string, MmdbValue> = {
  str: "hello",
  empty: "",
  quoted: 'he said "hi"\nand left',
  unicode: "Zürich 東京 🎉",
  long: "x".repeat(70_000),
  u16: uint16(65535),
  u32: uint32(4294967295),
  u32def: 13335,
  u64: uint64(2n ** 64n - 1n),
  u64def: 2 ** 40,
  u128: uint128(2n ** 128n - 1n),
  u128small: uint128(0x1234n),
  bigdef: 2n ** 100n,
  i32min: int32(-2147483648),
  negdef: -5,
  i32pos: int32(77),
  f: float(1.5),
  fneg: float(-0.1),
  d: double(3.141593),
  ddef: -2.5,
  big: 1e300,
  t: true,
  fl: false,
  arr: [1, "a", [], {}, [2, [3.25]]],
  nested: { a: { b: { c: [true, { d: "deep" }] } } },
  emptyMap: {},
  emptyArr: [],
  zero: 0,
};

Deno.test({
  name: ignoredName(
    "mmdblookup: every data type, via IPv4, IPv6, ::ffff:, 6to4 and Teredo addresses",
    missing,
  ),
  ignore: !available,
  fn: () =>
    withFile(
      build((w) => {
        w.insertNetwork("1.2.3.0/24", RECORD);
        w.insertNetwork("2001:db8::/32", { ...RECORD, v6: true });
      }),
      async (file) => {
        for (
          const [ip, rec, prefix] of [
            ["1.2.3.4", RECORD, 120],
            ["::ffff:1.2.3.255", RECORD, 120],
            ["2002:102:304::1", RECORD, 40], // 6to4 of 1.2.3.4
            ["2001:0:102:3ff:8000:f227:bef7:ff7e", RECORD, 56], // Teredo, server 1.2.3.255
            ["2001:db8:1::1", { ...RECORD, v6: true }, 32],
          ] as const
        ) {
          const got = await lookup(file, ip);
          assert.ok(got.value, ip);
          assertSame(got.value, expected(rec), ip);
          assert.equal(got.prefix, prefix, ip);
        }
        for (
          const ip of [
            "1.2.4.0",
            "2001:db9::",
            "2002:102:400::",
            "2001:0:102:400::",
            "::ffff:1.2.4.0",
            "::2",
          ]
        ) {
          assert.equal((await lookup(file, ip)).value, null, ip);
        }
      },
    )(),
});

/** One file of random ranges (both families, overlaps), and the model of it. */
function randomDb(seed: number, recordSize?: 24 | 28 | 32) {
  const rand = seededRandom(seed);
  const model = new Model<MmdbValue>();
  const probes: string[] = [];
  const pool: MmdbValue[] = Array.from({ length: 12 }, (_, i) => ({ n: i, org: `Org ${i}` }));
  const w = new MmdbWriter({ databaseType: "Rand", recordSize, buildEpoch: 7 });
  for (let i = 0; i < 120; i++) {
    const value = pool[Math.floor(rand() * pool.length)]!;
    const isV4 = rand() < 0.5;
    const lo = isV4
      ? randBig(rand, 32)
      : rand() < 0.8
      ? (1n << 125n) | (randBig(rand, 125) >> BigInt(Math.floor(rand() * 90)))
      : (0xffffn << 32n) | randBig(rand, 32);
    const span = isV4
      ? 1n << BigInt(Math.floor(rand() * 24))
      : 1n << BigInt(Math.floor(rand() * 90));
    const max = isV4 ? MAX_V4 : MAX_V6;
    const end = lo + randBig(rand, 128) % span;
    const hi = end > max ? max : end;
    const text = (k: bigint) => (isV4 ? v4(k) : v6(k));
    w.insertRange(text(lo), text(hi), value);
    model.add(lo, hi, value);
    if (i % 3 === 0) {
      for (const k of [lo - 1n, lo, hi, hi + 1n]) if (k >= 0n && k <= max) probes.push(text(k));
    }
  }
  for (let i = 0; i < 15; i++) {
    const k = randBig(rand, 32);
    probes.push(v4(k), `::ffff:${v4(k)}`, v6((1n << 125n) | randBig(rand, 125)));
    probes.push(v6((0x2002n << 112n) | (k << 80n)), v6((0x20010000n << 96n) | (k << 64n) | 1n));
  }
  return { bytes: w.toBytes(), model, probes };
}

Deno.test({
  name: ignoredName(
    "mmdblookup: random ranges agree with the model and with mmdb-lib's prefix lengths",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const { bytes, model, probes } = randomDb(42);
    const r = open(bytes);
    await withFile(bytes, async (file) => {
      for (const ip of probes) {
        const got = await lookup(file, ip);
        const want = model.get(keyOf(ip));
        if (want === null) assert.equal(got.value, null, ip);
        else assertSame(got.value!, expected(want), ip);
        // libmaxminddb counts IPv4 prefixes in the IPv6 tree (96 + n); mmdb-lib from ::/96.
        const [, libPrefix] = r.getWithPrefixLength(ip);
        assert.equal(got.prefix, ip.includes(":") ? libPrefix : 96 + libPrefix, `prefix ${ip}`);
      }
    })();
  },
});

Deno.test({
  name: ignoredName("mmdblookup: record sizes 24/28/32 and metadata via --verbose", missing),
  ignore: !available,
  fn: async () => {
    for (const size of [24, 28, 32] as const) {
      const { bytes, model, probes } = randomDb(size, size);
      const w = new MmdbWriter({
        databaseType: "My-Type",
        languages: ["en", "de"],
        description: { en: "English text", de: "Deutscher Text" },
        buildEpoch: 1_700_000_000,
        recordSize: size,
      });
      w.insertNetwork("1.2.3.0/24", "x");
      const metaBytes = w.toBytes();
      await withFile(metaBytes, async (file) => {
        const { metadata } = await runMmdblookup(file, "1.2.3.4", { verbose: true });
        const field = (name: string) =>
          new RegExp(`^\\s*${name}:\\s*(.*?)\\s*$`, "m").exec(metadata)?.[1];
        assert.equal(field("Node count"), String(open(metaBytes).metadata.nodeCount));
        assert.equal(field("Record size"), `${size} bits`);
        assert.equal(field("IP version"), "IPv6");
        assert.equal(field("Binary format"), "2.0");
        assert.match(field("Build epoch") ?? "", /^1700000000 \(2023-11-14 22:13:20 UTC\)$/);
        assert.equal(field("Type"), "My-Type");
        assert.equal(field("Languages"), "en de");
        assert.equal(field("en"), "English text");
        assert.equal(field("de"), "Deutscher Text");
      })();
      await withFile(bytes, async (file) => {
        for (const ip of probes.slice(0, 40)) {
          const want = model.get(keyOf(ip));
          const got = (await lookup(file, ip)).value;
          if (want === null) assert.equal(got, null, `${size}: ${ip}`);
          else assertSame(got!, expected(want), `${size}: ${ip}`);
        }
      })();
    }
  },
});

Deno.test({
  name: ignoredName(
    "mmdblookup: 28-bit records above 2^24, shared values behind pointers",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const country = { iso_code: "DE", names: { en: "Germany", de: "Deutschland" } };
    const bytes = build((w) => {
      w.insertNetwork("0.0.0.0/8", "z".repeat(16_800_000));
      for (let i = 1; i < 30; i++) {
        w.insertNetwork(`${i}.0.0.0/8`, { city: `City ${i}`, country, registered: country });
      }
      w.insertNetwork("2a00::/16", { city: "v6", country });
    });
    assert.equal(open(bytes).metadata.recordSize, 28);
    await withFile(bytes, async (file) => {
      for (let i = 1; i < 30; i += 7) {
        const got = await lookup(file, `${i}.1.2.3`);
        assertSame(
          got.value!,
          expected({ city: `City ${i}`, country, registered: country }),
          `${i}`,
        );
        assert.equal(got.prefix, 104);
      }
      assertSame((await lookup(file, "2a00:1::")).value!, expected({ city: "v6", country }), "v6");
    })();
  },
});

Deno.test({
  name: ignoredName(
    "mmdblookup: edge ranges (whole spaces, single addresses, first and last)",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const cases: [string, string, string[], string[]][] = [
      ["0.0.0.0", "255.255.255.255", ["0.0.0.0", "255.255.255.255", "::ffff:9.9.9.9"], [
        "2001:db8::",
      ]],
      ["0.0.0.0", "0.0.0.0", ["0.0.0.0", "::"], ["0.0.0.1"]],
      ["255.255.255.255", "255.255.255.255", ["255.255.255.255"], ["255.255.255.254"]],
      ["::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ["::", "1.2.3.4", "ffff::1"], []],
      ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", [
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
      ], ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"]],
      ["10.0.0.1", "10.255.255.254", ["10.0.0.1", "10.128.0.0", "10.255.255.254"], [
        "10.0.0.0",
        "10.255.255.255",
      ]],
    ];
    for (const [first, last, hits, misses] of cases) {
      const bytes = build((w) => w.insertRange(first, last, { range: `${first}-${last}` }));
      await withFile(bytes, async (file) => {
        for (const ip of hits) {
          const got = await lookup(file, ip);
          assertSame(got.value!, expected({ range: `${first}-${last}` }), ip);
        }
        for (const ip of misses) assert.equal((await lookup(file, ip)).value, null, ip);
      })();
    }
  },
});
