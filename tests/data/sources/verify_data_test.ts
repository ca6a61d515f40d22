/**
 * Strict decoding: a MaxMind DB whose data section breaks one rule of the format is
 * refused by verification, naming the rule and the offset; where libmaxminddb refuses
 * the same file, mmdblookup is run on it as the independent witness.
 */

import assert from "node:assert/strict";
import { verifyMmdb } from "../../../src/data/sources/verify_mmdb.ts";
import { MMDBLOOKUP_MISSING, mmdblookupAvailable, runMmdblookup } from "../../_mmdblookup.ts";
import { mapRecord, rawMmdb } from "../mmdb/_raw.ts";
import { ignoredName } from "../../_skip.ts";

/** Each case: the data section of one record (a map at offset 0, for 1.2.3.0/24). */
const CASES: { rule: string; data: number[]; error: RegExp; libmaxminddb: boolean }[] = [
  {
    rule: "a double of size 4",
    data: [0xe1, 0x41, 0x61, 0x64, 1, 2, 3, 4],
    error: /offset 3: a double of size 4 \(8 only\)/,
    libmaxminddb: true,
  },
  {
    rule: "a float of size 8",
    data: [0xe1, 0x41, 0x61, 0x08, 0x08, 1, 2, 3, 4, 5, 6, 7, 8],
    error: /offset 3: a float of size 8 \(4 only\)/,
    libmaxminddb: true,
  },
  {
    rule: "a uint16 of size 3",
    data: [0xe1, 0x41, 0x61, 0xa3, 1, 2, 3],
    error: /a uint16 of size 3 \(at most 2\)/,
    libmaxminddb: true,
  },
  {
    rule: "a uint32 of size 5",
    data: [0xe1, 0x41, 0x61, 0xc5, 1, 2, 3, 4, 5],
    error: /a uint32 of size 5 \(at most 4\)/,
    libmaxminddb: true,
  },
  {
    rule: "an int32 of size 5",
    data: [0xe1, 0x41, 0x61, 0x05, 0x01, 1, 2, 3, 4, 5],
    error: /an? int32 of size 5 \(at most 4\)/,
    libmaxminddb: true,
  },
  {
    rule: "a uint64 of size 9",
    data: [0xe1, 0x41, 0x61, 0x09, 0x02, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    error: /a uint64 of size 9 \(at most 8\)/,
    libmaxminddb: true,
  },
  {
    rule: "a uint128 of size 17",
    data: [0xe1, 0x41, 0x61, 0x11, 0x03, ...new Array(17).fill(7)],
    error: /a uint128 of size 17 \(at most 16\)/,
    libmaxminddb: true,
  },
  {
    rule: "a pointer past the end of the data section",
    data: [0xe1, 0x41, 0x61, 0x27, 0xff],
    error: /offset 3: a pointer to 2047, past the end of the section/,
    libmaxminddb: true,
  },
  {
    rule: "a map key that is not a string",
    data: [0xe1, 0xa1, 0x01, 0x41, 0x78],
    error: /offset 1: a map key that is not a UTF-8 string/,
    libmaxminddb: false, // the format says keys are strings; mmdblookup 1.x prints it anyway
  },
  {
    rule: "a pointer to a pointer",
    data: [0xe1, 0x41, 0x61, 0x20, 0x05, 0x20, 0x07, 0x41, 0x78],
    error: /offset 5: a pointer to a pointer/,
    libmaxminddb: true,
  },
  {
    rule: "a data cache container",
    data: [0xe1, 0x41, 0x61, 0x00, 0x05],
    error: /offset 3: type 12 \(data cache container\)/,
    libmaxminddb: false, // a type the format reserves; mmdblookup 1.x skips it
  },
  {
    rule: "a string running past the end",
    data: [0xe1, 0x41, 0x61, 0x45, 0x68, 0x69],
    error: /offset 3: a value runs past the end of the section/,
    libmaxminddb: false, // mmdblookup reads on into the separator and metadata
  },
  {
    rule: "a boolean of size 2",
    data: [0xe1, 0x41, 0x61, 0x02, 0x07],
    error: /a boolean of size 2 \(0 or 1 only\)/,
    libmaxminddb: false,
  },
  {
    rule: "a pointer into the middle of a value",
    data: [0xe2, 0x41, 0x61, 0x45, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x41, 0x62, 0x20, 0x04],
    error: /offset 4: a pointer to a place that is not the start of a value/,
    libmaxminddb: false,
  },
];

const fileOf = (data: Uint8Array) =>
  rawMmdb({
    ipVersion: 6,
    databaseType: "GeoLite2-City",
    networks: [{ network: "1.2.3.0/24", offset: 0 }],
    data,
  });

Deno.test("verification accepts a well-formed record (the cases below differ only in the rule broken)", () => {
  const { networks } = verifyMmdb(fileOf(mapRecord("fine")));
  assert.equal(networks, 1);
});

for (const c of CASES) {
  Deno.test(`verification refuses ${c.rule}, naming it`, () => {
    assert.throws(() => verifyMmdb(fileOf(new Uint8Array(c.data))), c.error);
  });
}

Deno.test({
  name: ignoredName(
    "mmdblookup (libmaxminddb) refuses the same files that it decodes strictly",
    mmdblookupAvailable() ? null : MMDBLOOKUP_MISSING,
  ),
  ignore: !mmdblookupAvailable(),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-strict-" });
    try {
      await Deno.writeFile(`${dir}/fine.mmdb`, fileOf(mapRecord("fine")));
      assert.ok((await runMmdblookup(`${dir}/fine.mmdb`, "1.2.3.4")).value, "the control decodes");
      for (const c of CASES.filter((c) => c.libmaxminddb)) {
        const file = `${dir}/case.mmdb`;
        await Deno.writeFile(file, fileOf(new Uint8Array(c.data)));
        await assert.rejects(runMmdblookup(file, "1.2.3.4"), /exited/, c.rule);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
