/** `GET /asn/{n}` through the app, in process (app.request / app.fetch). */

import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { ROUTES } from "../../../src/service/app/app.ts";
import { openApiDocument } from "../../../src/service/app/openapi.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { fixtureApp, peer } from "../../_helpers.ts";
import { ASN_RANGES, asnDataSet } from "./_fixtures.ts";

const data = await asnDataSet();
const app = await fixtureApp({ data });

Deno.test("GET /asn/{n} answers the AS in JSON, alike for 100, AS100 and as100", async () => {
  const response = await app.request("/asn/100");
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
  assert.ok(response.headers.get("x-data-version"), "the data set that answered is named");
  const body = await response.json();
  assert.equal(body.success, true);
  assert.equal(body.data.name, "Example Net");
  assert.deepEqual(body.data.prefixes.ipv4, ["10.0.0.0/23"]);
  for (const path of ["/asn/AS100", "/asn/as100"]) {
    assert.deepEqual(await (await app.request(path)).json(), body, path);
  }
});

Deno.test("GET /asn/{n}?format=csv lists the prefixes, one a row; get filters", async () => {
  const csv = await (await app.request("/asn/100?format=CSV&get=prefixes")).text();
  const rows: Record<string, string>[] = parseCsv(csv, { columns: true });
  assert.deepEqual(rows.map((r) => r.prefix), [
    "10.0.0.0/23",
    "2001:db8::/47",
    "2001:db8:2::/96",
    "2001:db8:2::5:0:0/96",
  ]);
  const counts = await (await app.request("/asn/200?get=ipv4Addresses")).json();
  assert.deepEqual(counts.data, { asn: 200, ipv4Addresses: 256 });
  const xml = await (await app.request("/asn/200?format=xml")).text();
  assert.match(xml, /^<\?xml[^]*<asn>200<\/asn>[^]*<item>10\.0\.2\.0\/24<\/item>/);
});

Deno.test("GET /asn/{n} refuses malformed numbers (400) and answers 404 for private or unknown ones", async () => {
  const cases: [string, number, RegExp][] = [
    ["/asn/abc", 400, /Invalid AS number "abc"/],
    ["/asn/-1", 400, /Invalid AS number "-1"/],
    ["/asn/4294967296", 400, /Invalid AS number "4294967296"/],
    ["/asn/", 400, /Missing AS number/],
    ["/asn/64512", 404, /No data for AS64512: it is a private-use AS number/],
    ["/asn/300", 404, /^No data for AS300$/],
    ["/asn/100?get=city", 400, /Unknown field "city" in get/],
  ];
  for (const [path, status, message] of cases) {
    const response = await app.request(path);
    assert.equal(response.status, status, path);
    const body = await response.json();
    assert.equal(body.success, false, path);
    assert.match(body.message, message, path);
  }
  const xml = await app.request("/asn/abc?format=xml");
  assert.equal(xml.status, 400);
  assert.match(await xml.text(), /<success>false<\/success><message>Invalid AS number/);
});

/** The app with keys and limits as a server has them (in memory), on a fixed clock. */
async function limitedApp(anonRateLimit: number, store = new MemoryKeyStore()) {
  const keys = new KeyTable(store);
  await keys.refresh();
  const limiter = new RateLimiter({ counters: new MemoryRateCounters(), now: () => 60_000_000 });
  const access = new AccessControl(
    { auth: "optional", rateLimit: 5, rateWindow: 60, anonRateLimit },
    keys,
    limiter,
  );
  const limited = await fixtureApp({ data, config: { bulkMax: 100 }, access });
  const get = (path: string, headers: Record<string, string> = {}) =>
    limited.fetch(new Request(`http://localhost${path}`, { headers }), peer("203.0.113.9"));
  return { get, store, keys };
}

Deno.test("GET /asn/{n} costs one unit: with an anonymous limit of 2, the third call is 429", async () => {
  const { get } = await limitedApp(2);
  const first = await get("/asn/100");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("ratelimit-limit"), "2");
  assert.equal(first.headers.get("ratelimit-remaining"), "1");
  assert.equal((await get("/asn/AS200")).status, 200);
  const third = await get("/asn/100");
  assert.equal(third.status, 429);
  assert.ok(Number(third.headers.get("retry-after")) > 0);
  assert.match((await third.json()).message, /[Rr]ate limit/);
  // The budget is the one /ip spends.
  assert.equal((await get("/ip/10.0.0.1")).status, 429);
});

Deno.test("GET /asn/{n} takes keys as /ip does: a wrong key is 401, a good one is served", async () => {
  const store = new MemoryKeyStore();
  const { key } = await store.create({ name: "acme" });
  const { get } = await limitedApp(0, store);
  assert.equal((await get("/asn/100", { "x-api-key": "ipi_wrong" })).status, 401);
  const served = await get("/asn/100", { "x-api-key": key });
  assert.equal(served.status, 200);
  assert.equal(served.headers.get("ratelimit-limit"), "5");
});

Deno.test("the OpenAPI document describes /asn/{n} and the Asn schema", () => {
  const doc = openApiDocument(ROUTES) as unknown as {
    paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
    components: { schemas: Record<string, unknown> };
  };
  assert.ok(doc.paths["/asn/{n}"]?.get?.responses["429"]);
  assert.ok(doc.components.schemas.Asn);
  assert.ok(doc.components.schemas.MatchedNetworks);
});

/** AS 500 with 2,500 /24s that do not collapse (every other one), beside the fixture's ASes. */
const BIG_RANGES: typeof ASN_RANGES = [
  ...ASN_RANGES,
  ...Array.from(
    { length: 2500 },
    (_, i) =>
      [`11.${i >> 7}.${(i & 127) * 2}.0/24`, {
        autonomous_system_number: 500,
        autonomous_system_organization: "Big Net",
      }] as (typeof ASN_RANGES)[number],
  ),
];

Deno.test("GET /asn/{n} costs 1 unit and 1 more per 1,000 prefixes in the answer, in the RateLimit headers", async () => {
  const big = await asnDataSet(BIG_RANGES);
  const keys = new KeyTable(new MemoryKeyStore());
  await keys.refresh();
  const access = new AccessControl(
    { auth: "optional", rateLimit: 5, rateWindow: 60, anonRateLimit: 20 },
    keys,
    new RateLimiter({ counters: new MemoryRateCounters(), now: () => 60_000_000 }),
  );
  const limited = await fixtureApp({ data: big, access });
  const get = (path: string) =>
    limited.fetch(new Request(`http://localhost${path}`), peer("203.0.113.9"));
  const spent = async (path: string, status = 200) => {
    const response = await get(path);
    assert.equal(response.status, status, path);
    await response.body?.cancel();
    return response.headers.get("ratelimit-remaining");
  };
  // 2,500 prefixes: 1 + 2 units.
  assert.equal(await spent("/asn/500"), "17");
  const rows = (await (await get("/asn/500?format=csv&get=ipv4")).text()).trim().split("\n");
  assert.equal(rows.length, 2501); // and 3 more units: 14 left
  // Without the prefixes in the answer, or a small AS: 1 unit.
  assert.equal(await spent("/asn/500?get=name,counts"), "13");
  assert.equal(await spent("/asn/500?get=ipv6"), "12");
  assert.equal(await spent("/asn/100"), "11");
  // What does not fit is refused whole (the first unit is spent finding the AS's size).
  for (let left = 11; left > 2; left -= 3) assert.equal(await spent("/asn/500"), String(left - 3));
  assert.equal(await spent("/asn/500", 429), "1");
  assert.equal(await spent("/asn/100"), "0");
  const body = await (await get("/asn/100")).json();
  assert.match(body.message, /[Rr]ate limit/);
});

Deno.test("GET /asn/{n} refuses a format or at it does not take, with a 400 naming it, before charging", async () => {
  const { get } = await limitedApp(1);
  const cases: [string, RegExp][] = [
    ["/asn/100?format=ndjson", /^Invalid format "ndjson": \/asn\/\{n\} answers json, xml or csv$/],
    ["/asn/100?format=yaml&get=name", /^Invalid format "yaml"/],
    ["/asn/100?at=junk", /^Invalid at "junk": expected an ISO 8601 time/],
    ["/asn/100?at=2026-02-30", /^Invalid at "2026-02-30"/],
  ];
  for (const [path, message] of cases) {
    const response = await get(path);
    assert.equal(response.status, 400, path);
    assert.match((await response.json()).message, message, path);
    assert.equal(response.headers.get("ratelimit-remaining"), null, `${path}: charged`);
  }
  // Still the one unit left; the formats it takes, in any case, and a well-formed at, answer.
  assert.equal((await get("/asn/100?format=XML&at=2026-01-01")).status, 200);
});
