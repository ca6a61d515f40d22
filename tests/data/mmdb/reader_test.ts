/** Our tree walk (`getBytes`) must find exactly what mmdb-lib's own walk (`get`) finds. */

import assert from "node:assert/strict";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { CorruptRecordError, openMmdb } from "../../../src/data/mmdb/reader.ts";
import { seededRandom } from "../../_random.ts";
import { defaultDataFile } from "../../_helpers.ts";
import { build, v4, v6 } from "./_fixtures.ts";
import { mapRecord, rawMmdb } from "./_raw.ts";

/** Random addresses, plus the edges of every inserted range and their neighbours. */
function probes(random: () => number, ranges: [bigint, bigint][], family: 4 | 6): string[] {
  const text = (n: bigint) => family === 4 ? v4(n) : v6(n);
  const max = family === 4 ? 0xffffffffn : (1n << 128n) - 1n;
  const out: string[] = [];
  for (const [lo, hi] of ranges) {
    for (const n of [lo - 1n, lo, hi, hi + 1n]) if (n >= 0n && n <= max) out.push(text(n));
  }
  for (let i = 0; i < 2000; i++) {
    const bits = family === 4 ? 32 : 128;
    let n = 0n;
    for (let b = 0; b < bits; b += 16) n = (n << 16n) | BigInt(Math.floor(random() * 65536));
    out.push(text(n));
  }
  return out;
}

function randomRanges(random: () => number, family: 4 | 6, count: number): [bigint, bigint][] {
  const bits = family === 4 ? 32 : 128;
  const ranges: [bigint, bigint][] = [];
  for (let i = 0; i < count; i++) {
    let lo = 0n;
    for (let b = 0; b < bits; b += 16) lo = (lo << 16n) | BigInt(Math.floor(random() * 65536));
    const span = BigInt(Math.floor(random() * 2 ** 20));
    const max = (1n << BigInt(bits)) - 1n;
    ranges.push([lo, lo + span > max ? max : lo + span]);
  }
  return ranges;
}

for (const recordSize of [24, 28, 32] as const) {
  Deno.test(`getBytes() agrees with mmdb-lib's get() on a ${recordSize}-bit file`, () => {
    const random = seededRandom(recordSize);
    const r4 = randomRanges(random, 4, 300);
    const r6 = randomRanges(random, 6, 300);
    const bytes = build((w) => {
      r4.forEach(([lo, hi], i) => w.insertRange(v4(lo), v4(hi), { n: i, family: "v4" }));
      r6.forEach(([lo, hi], i) => w.insertRange(v6(lo), v6(hi), { n: i, family: "v6" }));
    }, { recordSize });
    const db = openMmdb<{ n: number }>(bytes);
    assert.equal(db.metadata.recordSize, recordSize);
    let found = 0;
    for (const ip of [...probes(random, r4, 4), ...probes(random, r6, 6)]) {
      const parsed = parseIp(ip);
      const expected = db.get(parsed.address);
      assert.deepEqual(db.getBytes(parsed.bytes), expected, ip);
      if (expected) found++;
      // The matched network's length, as mmdb-lib's own walk reports it.
      if (expected) assert.equal(db.prefixLength(parsed.bytes), db.getWithPrefixLength(ip)[1], ip);
    }
    assert.ok(found > 1000, `too few probes hit data (${found})`);
  });
}

Deno.test("getBytes() agrees with get() on the real City and ASN databases", async () => {
  const random = seededRandom(7);
  const word = () => Math.floor(random() * 65536);
  for (const file of [defaultDataFile("city"), defaultDataFile("asn")]) {
    const db = openMmdb(await Deno.readFile(file), { cacheSize: 1000 });
    let found = 0;
    for (let i = 0; i < 5000; i++) {
      const ip = i % 2
        ? [word() >> 8, word() >> 8, word() >> 8, word() >> 8].join(".")
        : [0x2000 + (word() & 0x1fff), ...Array.from({ length: 7 }, word)]
          .map((w) => w.toString(16)).join(":"); // global unicast 2000::/3
      const parsed = parseIp(ip);
      const expected = db.get(parsed.address);
      assert.deepEqual(db.getBytes(parsed.bytes), expected, `${file} ${ip}`);
      if (expected) found++;
    }
    assert.ok(found > 1500, `${file}: too few probes hit data (${found})`);
  }
});

Deno.test("6to4 and Teredo addresses read the IPv4 address they embed in any file", async () => {
  const data = mapRecord("one-two-three");
  const plain = openMmdb<{ name: string }>(
    rawMmdb({ ipVersion: 6, networks: [{ network: "1.2.3.0/24", offset: 0 }], data }),
  );
  const v4only = openMmdb<{ name: string }>(
    rawMmdb({ ipVersion: 4, networks: [{ network: "1.2.3.0/24", offset: 0 }], data }),
  );
  // Neither file aliases the transition ranges: libmaxminddb finds nothing there.
  for (const db of [plain, v4only]) {
    assert.equal(db.get("2002:102:304::1"), null);
    for (const ip of ["1.2.3.4", "::ffff:1.2.3.4", "2002:102:304::1", "2001:0:102:3ff::1"]) {
      assert.deepEqual(db.getBytes(parseIp(ip).bytes), { name: "one-two-three" }, ip);
    }
    // Their network counts the IPv4 /24 after the 16 (6to4) or 32 (Teredo) bits before it.
    const prefix = (ip: string) => db.prefixLength(parseIp(ip).bytes);
    assert.deepEqual(
      [prefix("1.2.3.4"), prefix("2002:102:304::1"), prefix("2001:0:102:3ff::1")],
      [24, 40, 56],
    );
    for (const ip of ["1.2.4.0", "2002:102:400::", "2001:0:102:400::", "2001:1:102:304::"]) {
      assert.equal(db.getBytes(parseIp(ip).bytes), null, ip);
    }
  }
  assert.equal(plain.getBytes(parseIp("::1.2.3.4").bytes)?.name, "one-two-three");
  // The real GeoLite2-City aliases them itself; our walk agrees with mmdb-lib's there.
  const city = openMmdb(await Deno.readFile(defaultDataFile("city")));
  for (
    const ip of ["2002:808:808::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2002:5102:4501::"]
  ) {
    assert.deepEqual(city.getBytes(parseIp(ip).bytes), city.get(ip), ip);
  }
});

Deno.test("getBytes() needs nothing private of mmdb-lib: it reads with Reader's step removed", async () => {
  // The step getBytes() once borrowed; mmdb-lib declares it private.
  const { Reader } = await import("mmdb-lib");
  const bytes = await Deno.readFile(defaultDataFile("asn"));
  const db = openMmdb<{ autonomous_system_number: number }>(bytes);
  const original = Object.getOwnPropertyDescriptor(Reader.prototype, "resolveDataPointer")!;
  // deno-lint-ignore no-explicit-any
  delete (Reader.prototype as any).resolveDataPointer;
  try {
    assert.equal(db.getBytes(new Uint8Array([8, 8, 8, 8]))?.autonomous_system_number, 15169);
  } finally {
    Object.defineProperty(Reader.prototype, "resolveDataPointer", original);
  }
});

Deno.test("records are cached by data offset: one decode per record, then the same object", () => {
  const bytes = build((w) => {
    w.insertNetwork("1.0.0.0/8", { n: 1, shared: { x: [1, 2] } });
    w.insertNetwork("2.0.0.0/8", { n: 2, shared: { x: [1, 2] } });
    w.insertNetwork("3.0.0.0/8", { n: 1, shared: { x: [1, 2] } }); // the same record as 1/8
    w.insertNetwork("4.0.0.0/8", { n: 4, shared: { x: [1, 2] } });
  });
  const db = openMmdb<{ n: number; shared: unknown }>(bytes);
  const at = (ip: string) => db.getBytes(parseIp(ip).bytes);
  // The first record holds its values in place: one miss, its own.
  const first = at("1.2.3.4");
  assert.deepEqual(first, { n: 1, shared: { x: [1, 2] } });
  assert.deepEqual(db.cacheCounts(), { hits: 0, misses: 1 });
  assert.equal(at("1.9.9.9"), first);
  assert.equal(at("3.3.3.3"), first);
  assert.deepEqual(db.cacheCounts(), { hits: 2, misses: 1 });
  // The second points at the map the first holds: its miss and the map's (keys are
  // not counted: the decoder keeps them).
  const second = at("2.2.2.2");
  assert.deepEqual(db.cacheCounts(), { hits: 2, misses: 3 });
  // The third finds the map in the cache: one object for the map the records share.
  assert.equal(at("4.4.4.4")?.shared, second?.shared);
  assert.deepEqual(db.cacheCounts(), { hits: 3, misses: 4 });
  assert.equal(at("9.9.9.9"), null); // no record: not counted
  assert.deepEqual(db.cacheCounts(), { hits: 3, misses: 4 });
  // Without a cache every lookup decodes again: equal records, not the same object.
  const uncached = openMmdb<{ n: number }>(bytes, { cacheSize: 0 });
  const a = uncached.getBytes(parseIp("1.2.3.4").bytes);
  const b = uncached.getBytes(parseIp("1.2.3.4").bytes);
  assert.deepEqual(a, b);
  assert.notEqual(a, b);
  assert.deepEqual(uncached.cacheCounts(), { hits: 0, misses: 2 }); // in place: no pointers
});

Deno.test("a record that does not decode throws CorruptRecordError at each lookup, naming the file", () => {
  const good = mapRecord("fine");
  // Record 2: { name: <pointer to a pointer> }; record 3: past the end of the data section.
  const target = good.length + 8; // the pointer after record 2
  const bad = Uint8Array.from([0xe1, 0x44, ...new TextEncoder().encode("name"), 0x20, target]);
  const data = Uint8Array.from([...good, ...bad, 0x20, 0x00]);
  const bytes = rawMmdb({
    ipVersion: 4,
    networks: [
      { network: "1.0.0.0/8", offset: 0 },
      { network: "2.0.0.0/8", offset: good.length },
      { network: "3.0.0.0/8", offset: data.length + 5 },
    ],
    data,
  });
  const db = openMmdb<{ name: string }>(bytes, { label: "bad.mmdb" });
  assert.deepEqual(db.getBytes(parseIp("1.1.1.1").bytes), { name: "fine" });
  for (let i = 0; i < 2; i++) {
    assert.throws(
      () => db.getBytes(parseIp("2.2.2.2").bytes),
      (e: unknown) =>
        e instanceof CorruptRecordError &&
        e.message ===
          `Corrupt record in bad.mmdb at data offset ${good.length}: data section offset ` +
            `${good.length + 6}: a pointer to a pointer (at ${target})`,
    );
  }
  assert.throws(
    () => db.getBytes(parseIp("3.3.3.3").bytes),
    new RegExp(`at data offset ${data.length + 5}: .* a record outside the data section`),
  );
  assert.deepEqual(db.getBytes(parseIp("1.1.1.1").bytes), { name: "fine" });
});

Deno.test("withoutCacheFills reads the database's record cache but leaves it unfilled", () => {
  const bytes = build((w) => {
    w.insertNetwork("1.0.0.0/8", { n: 1 });
    w.insertNetwork("2.0.0.0/8", { n: 2 });
  });
  const db = openMmdb<{ n: number }>(bytes);
  const at = (ip: string) => db.getBytes(parseIp(ip).bytes);
  const kept = at("1.2.3.4"); // filled: kept
  const other = openMmdb<{ n: number }>(bytes);
  const [cached, scanned, elsewhere] = db.withoutCacheFills(() => [
    at("1.9.9.9"),
    at("2.2.2.2"),
    other.getBytes(parseIp("1.2.3.4").bytes),
  ]);
  // Another database fills its cache meanwhile: the mode is the database's own.
  assert.equal(other.getBytes(parseIp("1.2.3.4").bytes), elsewhere);
  assert.equal(cached, kept); // a cached record is read as usual
  assert.deepEqual(scanned, { n: 2 });
  assert.deepEqual(db.cacheCounts(), { hits: 1, misses: 2 });
  // The record decoded meanwhile was not kept: the next lookup decodes it again.
  const again = at("2.3.3.3");
  assert.deepEqual(again, { n: 2 });
  assert.notEqual(again, scanned);
  assert.deepEqual(db.cacheCounts(), { hits: 1, misses: 3 });
  assert.equal(at("2.4.4.4"), again); // and now keeps it
  // Nested calls, and an error inside, still restore filling.
  assert.throws(() =>
    db.withoutCacheFills(() =>
      db.withoutCacheFills(() => {
        throw new Error("boom");
      })
    ), /boom/);
  const first = at("2.5.5.5");
  assert.equal(at("2.6.6.6"), first);
  assert.equal(db.withoutCacheFills(() => at("2.7.7.7")), first);
});
