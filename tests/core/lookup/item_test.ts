/**
 * The one item lookup (src/core/lookup/item.ts): the same bad addresses get
 * the same status and message from `GET /ip`, an item of `POST /bulk` (and of
 * `GET /bulk/{list}`) and the core's lookupItem; a failed item's kind is its
 * code, never its message text.
 */

import assert from "node:assert/strict";
import {
  failedItemOf,
  isFailedItem,
  itemErrorCode,
  lookupItem,
} from "../../../src/core/lookup/item.ts";
import { BadRequestError, InvalidIpError, NotFoundError } from "../../../src/base/errors.ts";
import type { FailedItem } from "../../../src/base/types.ts";
import { DEFAULT_DATA_DIR, FIXED_NOW, fixtureApp, fixtureLookup, peer } from "../../_helpers.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";

/** Bad addresses, and the code each fails with. */
const BAD: [string, "invalid_ip" | "not_found"][] = [
  ["not-an-ip", "invalid_ip"],
  ["300.1.1.1", "invalid_ip"],
  ["10.0.0.1", "not_found"],
  ["2001:db8::1", "not_found"],
];

Deno.test("bad addresses: the same status and message from /ip, a POST /bulk item, a GET /bulk item and the core's lookupItem", async () => {
  // The real data (10.0.0.1 is in the fixtures' City database, not in the real one).
  const data = await openDataSet(DEFAULT_DATA_DIR);
  const lookup = await fixtureLookup(FIXED_NOW, data);
  const app = await fixtureApp({ data, lookup });
  const request = (target: string, init?: RequestInit) =>
    app.request(target, init, peer("203.0.113.9"));
  const posted = await request("/bulk", {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: BAD.map(([ip]) => ip).join("\n"),
  });
  assert.equal(posted.status, 200);
  const postedItems = (await posted.json()).data.responseArray as FailedItem[];
  const listed = await request(`/bulk/${BAD.map(([ip]) => encodeURIComponent(ip)).join(",")}`);
  const listedItems = (await listed.json()).data.responseArray as FailedItem[];
  for (const [i, [ip, code]] of BAD.entries()) {
    const single = await request(`/ip/${encodeURIComponent(ip)}`);
    const { message } = await single.json();
    const item = lookupItem(lookup, ip);
    assert.ok(isFailedItem(item), ip);
    assert.deepEqual(item.error, { status: single.status, message }, `${ip}: core = /ip`);
    assert.deepEqual(postedItems[i], { ip, error: item.error }, `${ip}: POST /bulk = core`);
    assert.deepEqual(listedItems[i], { ip, error: item.error }, `${ip}: GET /bulk = core`);
    assert.equal(itemErrorCode(item), code, `${ip}: its kind by code`);
  }
});

Deno.test("a failed item's code is hidden: no serialiser writes it, no comparison sees it", async () => {
  const item = lookupItem(await fixtureLookup(), "not-an-ip") as FailedItem;
  assert.equal(JSON.stringify(item), JSON.stringify({ ip: "not-an-ip", error: item.error }));
  assert.deepStrictEqual(item, { ip: "not-an-ip", error: item.error });
  assert.deepEqual(Object.keys(item), ["ip", "error"]);
});

Deno.test("failedItemOf: an item's own failures by code (invalid, unknown), anything else null", () => {
  const invalid = failedItemOf("1.2.3", new InvalidIpError("1.2.3", "expected 4 octets"))!;
  assert.equal(itemErrorCode(invalid), "invalid_ip");
  assert.equal(invalid.error.status, 404);
  const unknown = failedItemOf("8.8.8.8", new NotFoundError("8.8.8.8", null))!;
  assert.equal(itemErrorCode(unknown), "not_found");
  assert.equal(failedItemOf("x", new BadRequestError("Invalid lang")), null);
  assert.equal(itemErrorCode({ ip: "x", error: { status: 500, message: "failed" } }), null);
});

Deno.test("lookupItem throws what is not an item's failure (an unsupported lang)", async () => {
  const lookup = await fixtureLookup();
  assert.throws(() => lookupItem(lookup, "81.2.69.142", { lang: "xx" }), /Unsupported lang "xx"/);
});
