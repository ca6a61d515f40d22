import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import { fixtureDataSet, fixtureLookup } from "../../_helpers.ts";
import { testServer } from "../ops/_server.ts";

// Which data answered: every answer made while data is loaded names its data set's version.

const basic = { authorization: `Basic ${btoa("42:any")}` };
const text = { "content-type": "text/plain" };

Deno.test("every answer names the data set that answered in X-Data-Version, as /status and the log do", async () => {
  const t = await testServer({ log: "on" });
  const data = await fixtureDataSet();
  const id = data.version.id;
  assert.match(id, /^[0-9a-f]{12}$/);
  const requests: [string, RequestInit?][] = [
    ["/ip/81.2.69.142"],
    ["/ip/81.2.69.142?format=xml"],
    ["/ip/81.2.69.142?format=csv"],
    ["/ip/1.2.3"], // an error answered with data loaded
    ["/nope"],
    ["/bulk/81.2.69.142,1.2.3?format=ndjson"],
    ["/bulk?format=ndjson", { method: "POST", headers: text, body: "81.2.69.142\n" }],
    ["/json/81.2.69.142"],
    ["/ipinfo/81.2.69.142/city"],
    ["/geoip/v2.1/country/81.2.69.142", { headers: basic }],
    ["/status"],
  ];
  for (const [path, init] of requests) {
    const response = await t.request(path, init);
    await response.text();
    assert.equal(response.headers.get("x-data-version"), id, path);
  }
  const status = await (await t.request("/status")).json();
  assert.equal(status.data.dataVersion.id, id);
  assert.ok(t.lines().length >= requests.length);
  for (const line of t.lines()) assert.equal(JSON.parse(line).dataVersion, id, line);
});

Deno.test("a reload changes X-Data-Version; while loading, a 503 names none", async () => {
  const t = await testServer({}, { loaded: false });
  const loading = await t.request("/ip/81.2.69.142");
  await loading.text();
  assert.equal(loading.status, 503);
  assert.equal(loading.headers.get("x-data-version"), null);
  const data = await fixtureDataSet();
  t.server.install(servedOf(data, await fixtureLookup()));
  const first = await t.request("/ip/81.2.69.142");
  await first.text();
  assert.equal(first.headers.get("x-data-version"), data.version.id);
  // The same data under another version, as a reload of changed files would give.
  const next = Object.assign(Object.create(data), {
    version: { id: "0123456789ab", installedAt: "2026-11-26T00:00:00.000Z" },
  });
  t.server.install(servedOf(next, await fixtureLookup()));
  const second = await t.request("/ip/81.2.69.142");
  await second.text();
  assert.equal(second.headers.get("x-data-version"), "0123456789ab");
});
