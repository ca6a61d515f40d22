import assert from "node:assert/strict";
import { bulkEnvelopeJson, resultEnvelopeJson } from "../../../src/core/format/result_json.ts";
import type { FailedItem, LookupResult } from "../../../src/base/types.ts";
import { CHROME, fixtureLookup } from "../../_helpers.ts";

const lookup = await fixtureLookup();
// London (a flag emoji), Berlin over IPv6, an ASN-only and a registered-country-only address.
const RESULTS: LookupResult[] = [
  lookup.find("81.2.69.142", { userAgent: CHROME }),
  lookup.find("2a02:ec0::1", { userAgent: null }),
  lookup.find("9.9.9.9", { userAgent: "curl/8.5.0" }),
  lookup.find("1.1.1.1", { lang: "de", userAgent: "Ünïcödé/1.0 ☃" }),
];
const FAILED: FailedItem = {
  ip: "nonsense",
  error: { status: 404, message: 'Invalid IP address "nonsense": not an address' },
};

/** Same value and same key order as JSON.stringify gives. */
function assertSameJson(text: string, value: unknown) {
  assert.ok(/^[\x20-\x7e]*$/.test(text), "printable ASCII only");
  assert.equal(JSON.stringify(JSON.parse(text)), JSON.stringify(value));
}

Deno.test("resultEnvelopeJson is JSON.stringify's envelope, key order and text included", () => {
  for (const result of RESULTS) {
    assertSameJson(resultEnvelopeJson(result), { success: true, data: result });
    // Twice: the second answer comes from the remembered parts.
    assertSameJson(resultEnvelopeJson(result), { success: true, data: result });
  }
});

Deno.test("bulkEnvelopeJson is JSON.stringify's bulk envelope, failed items in place", () => {
  const items = [...RESULTS, FAILED, RESULTS[0]!];
  assertSameJson(bulkEnvelopeJson(items), { success: true, data: { responseArray: items } });
  assertSameJson(bulkEnvelopeJson([]), { success: true, data: { responseArray: [] } });
});
