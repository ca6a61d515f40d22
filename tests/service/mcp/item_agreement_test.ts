/**
 * The one item lookup (src/core/lookup/item.ts) seen from the two other doors:
 * the same bad addresses get the same status and message from `/ip`, an MCP
 * `lookup_many` item and the core, and the same message in an enriched row
 * (tests/core/lookup/item_test.ts holds `/ip`, both bulks and the core).
 */

import assert from "node:assert/strict";
import { isFailedItem, lookupItem } from "../../../src/core/lookup/item.ts";
import { Enricher } from "../../../src/core/enrich/enricher.ts";
import { parseFieldSelection } from "../../../src/core/format/select.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { DEFAULT_DATA_DIR, FIXED_NOW, fixtureLookup, peer } from "../../_helpers.ts";
import { call, connect, keyedApp } from "./_mcp_app.ts";

/** Bad addresses: two invalid, two without data (in the real data). */
const BAD = ["not-an-ip", "300.1.1.1", "10.0.0.1", "2001:db8::1"];

Deno.test("bad addresses: the same status and message from /ip, an MCP lookup_many item, an enriched row and the core", async () => {
  const data = await openDataSet(DEFAULT_DATA_DIR);
  const lookup = await fixtureLookup(FIXED_NOW, data);
  const { app, key } = await keyedApp(100, {}, data);
  const client = await connect(app, key);
  try {
    const many = await call(client, "lookup_many", { ips: BAD });
    assert.ok(!many.isError, many.content[0]?.text);
    const items = (many.structuredContent as { items: unknown[] }).items;
    const enricher = new Enricher(lookup, {
      input: "ndjson",
      output: "ndjson",
      prefix: "ip_",
      into: "ipintel",
      selection: parseFieldSelection("countryCode"),
      lang: null,
      at: null,
    });
    const rows = (enricher.push(BAD.map((ip) => JSON.stringify({ ip }) + "\n").join("")) +
      enricher.end()).trimEnd().split("\n").map((line) => JSON.parse(line));
    for (const [i, ip] of BAD.entries()) {
      const single = await app.request(
        `/ip/${encodeURIComponent(ip)}`,
        { headers: { "x-api-key": key } },
        peer("203.0.113.7"),
      );
      const { message } = await single.json();
      const item = lookupItem(lookup, ip);
      assert.ok(isFailedItem(item), ip);
      assert.deepEqual(item.error, { status: single.status, message }, `${ip}: core = /ip`);
      assert.deepEqual(items[i], { ip, error: item.error }, `${ip}: MCP lookup_many = core`);
      assert.deepEqual(rows[i].ipintel, { error: message }, `${ip}: enrich = core`);
    }
    assert.deepEqual(enricher.counts.failed, { "invalid address": 2, "no data": 2 });
  } finally {
    await client.close();
  }
});
