/** A failed bulk item echoes its input capped, in every format (issue 12, item 2). */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { XMLParser } from "fast-xml-parser";
import { fixtureApp } from "../../_helpers.ts";

const app = await fixtureApp();
const LONG = "1".repeat(5000);
const CAPPED = `${"1".repeat(64)}…`;

Deno.test("POST /bulk: a failed item's ip is the input capped at 64 characters, in JSON", async () => {
  const response = await app.request("/bulk", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ips: [LONG, "81.2.69.142"] }),
  });
  assert.equal(response.status, 200);
  const [failed, found] = (await response.json()).data.responseArray;
  assert.equal(failed.ip, CAPPED);
  assert.equal(failed.error.status, 404);
  assert.ok(failed.error.message.length < 200, failed.error.message);
  assert.equal(found.ip, "81.2.69.142");
});

Deno.test("GET /bulk: a failed item's ip is capped in XML and CSV too", async () => {
  const xml = await (await app.request(`/bulk/${LONG},81.2.69.142?format=xml`)).text();
  const parsed = new XMLParser({ parseTagValue: false }).parse(xml);
  assert.equal(parsed.response.data.responseArray.item[0].ip, CAPPED);

  const csv = await (await app.request(`/bulk/${LONG},81.2.69.142?format=csv`)).text();
  const records: string[][] = parse(csv);
  const header = records[0]!;
  assert.equal(records[1]![header.indexOf("ip")], CAPPED);
  // Columns follow the result layout, with the error columns last.
  assert.deepEqual(header.slice(0, 2), ["ip", "geoLocation.continent"]);
  assert.deepEqual(header.slice(-2), ["error.status", "error.message"]);
});
