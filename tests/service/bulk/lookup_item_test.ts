/**
 * `lookup.item`, the bulk path that makes no Error for an address it cannot
 * answer, gives exactly the items the throwing lookup gives through
 * lookupItem (the message of NotFoundError is written there without it).
 */

import assert from "node:assert/strict";
import { lookupItem } from "../../../src/service/bulk/batches.ts";
import { AppError } from "../../../src/base/errors.ts";
import { fixtureLookup } from "../../_helpers.ts";
import { failedItemOf, itemErrorCode } from "../../../src/core/lookup/item.ts";

const INPUTS = [
  "81.2.69.142", // known: London
  "2a02:ec0::7", // known: Berlin
  "1.1.1.1", // registered country only
  "9.9.9.9", // ASN only
  "8.8.8.8", // no source knows it
  "2001:db8::1", // documentation range
  "10.1.2.3", // private range, in the City fixture
  "192.168.0.1", // private range, unknown
  "::1",
  "100.64.0.1",
  "2002:5102:458e::1", // 6to4 of 81.2.69.142
  "1.2.3",
  "not an address",
  "fe80::1%eth0",
  "x".repeat(200), // echoed capped
  "",
  "8.8.8.8/24",
  " 8.8.8.8",
  "1.2.3.04",
  "::1::2",
  "%41",
  "8.8.8.8\u{1F600}",
];

Deno.test("lookup.item gives the same items as the throwing lookup, for every kind of input", async () => {
  const lookup = await fixtureLookup();
  // The same lookup by the throwing path: what `find` throws, as its failed item.
  const throwing = (input: string, options: object) => {
    try {
      return lookup.find(input, options);
    } catch (error) {
      const failed = error instanceof AppError ? failedItemOf(input, error) : null;
      if (failed) return failed;
      throw error;
    }
  };
  for (const lang of [null, "de"]) {
    const options = { userAgent: "curl/8.5.0", lang };
    for (const input of INPUTS) {
      const item = lookupItem(input, options, lookup);
      const thrown = throwing(input, options);
      assert.deepEqual(item, thrown, `${input} (${lang})`);
      if ("error" in item && "error" in thrown) {
        assert.equal(itemErrorCode(item), itemErrorCode(thrown), `${input}: the same code`);
        assert.notEqual(itemErrorCode(item), null, `${input}: a code`);
      }
    }
  }
});

Deno.test("lookup.item throws what is not an item's failure (an unsupported lang)", async () => {
  const lookup = await fixtureLookup();
  assert.throws(() => lookup.item!("81.2.69.142", { lang: "xx" }), /Unsupported lang "xx"/);
});
