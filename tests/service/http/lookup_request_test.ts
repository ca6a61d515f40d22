/** What every lookup route reads of its query (src/service/http/lookup_request.ts). */

import assert from "node:assert/strict";
import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { fixtureApp, peer } from "../../_helpers.ts";

/** An app whose anonymous callers have `limit` units, with lists over 2 addresses streamed. */
async function limitedApp(limit: number) {
  const keys = new KeyTable(new MemoryKeyStore());
  await keys.refresh();
  const access = new AccessControl(
    { auth: "optional", rateLimit: 0, rateWindow: 60, anonRateLimit: limit },
    keys,
    new RateLimiter({ counters: new MemoryRateCounters() }),
  );
  return await fixtureApp({ access, config: { bulkMax: 2 } });
}

const json = { "content-type": "application/json" };

Deno.test("an unknown lang is a 400 on every lookup route, whatever the items, and charges nothing", async () => {
  const app = await limitedApp(100);
  const requests: [string, RequestInit][] = [
    // Every item fails: no lookup ever resolved the language.
    ["/bulk/1.2.3,x?lang=xx", {}],
    ["/bulk/1.2.3,x,y?lang=xx", {}], // streamed (over bulkMax)
    ["/bulk/1.2.3,x,y?lang=xx&format=ndjson", {}],
    ["/bulk?lang=xx", { method: "POST", headers: json, body: '{"ips":["1.2.3"]}' }],
    ["/bulk?lang=xx", { method: "POST", headers: json, body: '{"ips":[]}' }],
    ["/bulk?lang=xx", { method: "POST", headers: { "content-type": "text/plain" }, body: "x\n" }],
    ["/ip/1.2.3?lang=xx", {}],
    ["/ip/10.0.0.1?lang=xx", {}],
    ["/me?lang=xx", {}],
    // Found items too, as before.
    ["/bulk/81.2.69.142?lang=xx", {}],
    ["/ip/81.2.69.142?lang=xx", {}],
  ];
  for (const [target, init] of requests) {
    const label = `${init.method ?? "GET"} ${target}`;
    const response = await app.request(target, init, peer("198.51.100.7"));
    assert.equal(response.status, 400, label);
    assert.match(
      (await response.json()).message,
      /^Unsupported lang "xx": the City database/,
      label,
    );
    assert.equal(response.headers.get("ratelimit-remaining"), null, `${label}: charged`);
  }
  // Not one unit was spent: a request that is charged sees the whole budget.
  const after = await app.request("/ip/81.2.69.142?lang=de", {}, peer("198.51.100.7"));
  assert.equal(after.status, 200);
  assert.equal(after.headers.get("ratelimit-remaining"), "99");
});

Deno.test("a malformed lang is named whatever the items; a known one still answers failed items in place", async () => {
  const app = await fixtureApp();
  const malformed = await app.request("/bulk/1.2.3?lang=de_AT");
  assert.equal(malformed.status, 400);
  assert.match(
    (await malformed.json()).message,
    /^Invalid lang "de_AT": expected one language tag/,
  );
  const known = await app.request("/bulk/1.2.3,x?lang=de-AT");
  assert.equal(known.status, 200);
  const items = (await known.json()).data.responseArray;
  assert.deepEqual(items.map((i: { error: { status: number } }) => i.error.status), [404, 404]);
});
