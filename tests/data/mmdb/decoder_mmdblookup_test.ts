/**
 * Our reader's records (our tree walk and data-section decoder) against libmaxminddb's
 * `mmdblookup`, an independent reader, value for value and type for type: on the
 * real City and ASN databases, on files of the project's writer holding every type,
 * on hand-made bytes, and on corrupt data sections, which both must refuse.
 * Ignored (the reason in the name) when mmdblookup is not installed; CI installs it
 * (Debian mmdb-bin).
 */

import assert from "node:assert/strict";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { CorruptRecordError, openMmdb } from "../../../src/data/mmdb/reader.ts";
import {
  MMDBLOOKUP_MISSING,
  mmdblookupAvailable,
  runMmdblookup,
  type Typed,
} from "../../_mmdblookup.ts";
import { defaultDataFile } from "../../_helpers.ts";
import { seededRandom } from "../../_random.ts";
import { ignoredName } from "../../_skip.ts";
import { build } from "./_fixtures.ts";
import { EVERY_TYPE, pointerSizesSection } from "./_decoder_fixtures.ts";
import { mapRecord, rawMmdb } from "./_raw.ts";

const available = mmdblookupAvailable();
const missing = available ? null : MMDBLOOKUP_MISSING;

/** Holds our decoded value to mmdblookup's typed dump of it; `path` names the place. */
function assertDecodedAs(ours: unknown, theirs: Typed, path: string): void {
  const { t, v } = theirs;
  switch (t) {
    case "map": {
      const entries = v as [string, Typed][];
      assert.ok(isPlainObject(ours), `${path}: a map, ours ${describe(ours)}`);
      assert.deepEqual(Object.keys(ours), entries.map(([k]) => k), `${path}: keys`);
      for (const [k, x] of entries) assertDecodedAs(ours[k], x, `${path}.${k}`);
      return;
    }
    case "array": {
      const items = v as Typed[];
      assert.ok(Array.isArray(ours), `${path}: an array, ours ${describe(ours)}`);
      assert.equal(ours.length, items.length, `${path}: length`);
      items.forEach((x, i) => assertDecodedAs(ours[i], x, `${path}[${i}]`));
      return;
    }
    case "double":
    case "float": {
      // mmdblookup prints "%f": six decimals.
      assert.equal(typeof ours, "number", `${path}: a ${t}`);
      const n = ours as number;
      const close = Math.abs(n - (v as number)) <= 5.1e-7 + 1e-12 * Math.abs(n);
      assert.ok(close || Object.is(n, v), `${path}: ours ${n}, mmdblookup ${v}`);
      if (t === "float") assert.equal(n, Math.fround(n), `${path}: not a binary32 value`);
      return;
    }
    case "uint64":
    case "uint128":
      assert.equal(typeof ours, "bigint", `${path}: a ${t} is a bigint`);
      break;
    case "uint16":
    case "uint32":
    case "int32":
      assert.ok(Number.isInteger(ours), `${path}: a ${t} is an integer number`);
      break;
    case "bytes":
      assert.ok(ours instanceof Uint8Array, `${path}: bytes`);
      break;
  }
  assert.deepEqual(ours, v, path);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
const describe = (v: unknown) => Array.isArray(v) ? "an array" : typeof v;

/** Runs the test body with the database in a temp file. */
async function withFile(bytes: Uint8Array, fn: (file: string) => Promise<void>): Promise<void> {
  const file = await Deno.makeTempFile({ prefix: "mmdb-decoder-", suffix: ".mmdb" });
  try {
    await Deno.writeFile(file, bytes);
    await fn(file);
  } finally {
    await Deno.remove(file);
  }
}

/** Compares our record for `ip` with mmdblookup's; false when neither finds one. */
async function compare(
  db: ReturnType<typeof openMmdb>,
  file: string,
  ip: string,
): Promise<boolean> {
  const ours = db.getBytes(parseIp(ip).bytes);
  const { value } = await runMmdblookup(file, ip);
  if (value === null) {
    assert.equal(ours, null, `${ip}: mmdblookup finds nothing`);
    return false;
  }
  assert.ok(value, ip);
  assertDecodedAs(ours, value, ip);
  return true;
}

Deno.test({
  name: ignoredName(
    "mmdblookup: every type the writer stores, big maps and pointers to pointer-holding maps",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const bytes = build((w) => {
      w.insertNetwork("1.2.3.0/24", EVERY_TYPE);
      w.insertNetwork("2a00::/16", { first: EVERY_TYPE, again: EVERY_TYPE });
    });
    const db = openMmdb(bytes);
    await withFile(bytes, async (file) => {
      for (const ip of ["1.2.3.4", "2a00:1::1", "1.2.4.0"]) await compare(db, file, ip);
    });
  },
});

Deno.test({
  name: ignoredName(
    "mmdblookup: pointers of every size, bytes and a __proto__ key (hand-made bytes)",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const { data, record } = pointerSizesSection();
    const bytes = rawMmdb({
      ipVersion: 6,
      networks: [{ network: "1.2.3.0/24", offset: record }],
      data,
    });
    await withFile(bytes, async (file) => {
      assert.ok(await compare(openMmdb(bytes), file, "1.2.3.4"));
    });
  },
});

Deno.test({
  name: ignoredName(
    "mmdblookup: whole City and ASN records agree on 200 random addresses each",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const random = seededRandom(0xdec0de);
    const word = () => Math.floor(random() * 65536);
    const address = (i: number) =>
      i % 4 !== 3
        ? [word() >> 8, word() >> 8, word() >> 8, word() >> 8].join(".")
        : [0x2400 + (word() & 0x7ff), ...Array.from({ length: 7 }, word)]
          .map((w) => w.toString(16)).join(":"); // 2400::/5: the RIRs' blocks
    for (const file of [defaultDataFile("city"), defaultDataFile("asn")]) {
      const db = openMmdb(await Deno.readFile(file));
      let found = 0;
      let missed = 0;
      for (let i = 0; found < 200; i++) {
        if (await compare(db, file, address(i))) found++;
        else missed++;
      }
      assert.ok(missed > 0, `${file}: every address was found (the draw must miss too)`);
    }
  },
});

/** A record `{ bad: <value> }` whose value is the given raw bytes (data offset 0). */
function withValue(...value: number[]): Uint8Array {
  const head = mapRecord("x").slice(0, 1); // a map header of one pair
  return Uint8Array.from([...head, 0x43, ...new TextEncoder().encode("bad"), ...value]);
}

// Two refusals of ours are stricter than libmaxminddb (decoder_test.ts holds them): a value
// running past the data section (libmaxminddb bounds reads by the file, so a string there
// reads on into the metadata marker) and a map key that is not a string (mmdblookup prints
// it). src/data/sources/verify_data.ts refuses both at install.
Deno.test({
  name: ignoredName("mmdblookup: corrupt records are refused by both readers", missing),
  ignore: !available,
  fn: async () => {
    const cases: [string, Uint8Array][] = [
      ["a pointer past the section", withValue(0x27, 0xff)],
      ["a pointer to a pointer", Uint8Array.from([...withValue(0x20, 0x07), 0x20, 0x00])],
      ["a uint16 of 3 bytes", withValue(0xa3, 1, 2, 3)],
      ["a uint32 of 5 bytes", withValue(0xc5, 1, 2, 3, 4, 5)],
      ["a double of 4 bytes", withValue(0x64, 0, 0, 0, 0)],
      ["a float of 8 bytes", withValue(0x08, 0x08, 0, 0, 0, 0, 0, 0, 0, 0)],
      ["a map count past the section", withValue(0xe9, 0x41, 0x61)],
      ["a map that points at itself", withValue(0xe1, 0x41, 0x61, 0x20, 0x05)],
    ];
    for (const [what, data] of cases) {
      const bytes = rawMmdb({
        ipVersion: 6,
        networks: [{ network: "1.2.3.0/24", offset: 0 }],
        data,
      });
      const db = openMmdb(bytes, { label: "corrupt.mmdb" });
      assert.throws(
        () => db.getBytes(parseIp("1.2.3.4").bytes),
        (e: unknown) =>
          e instanceof CorruptRecordError && /corrupt\.mmdb at data offset 0/.test(e.message),
        what,
      );
      await withFile(bytes, async (file) => {
        await assert.rejects(
          runMmdblookup(file, "1.2.3.4"),
          /exited 5: .*contains bad data/,
          `mmdblookup reads ${what}`,
        );
      });
    }
  },
});
