import assert from "node:assert/strict";
import { IPAPI_FIELDS, parseIpApiFields } from "../../../src/service/compat/ipapi.ts";
import { compatApp } from "./_app.ts";

Deno.test("ip-api: /json/{ip} answers its default fields in its order", async () => {
  const { request } = await compatApp();
  const response = await request("/json/81.2.69.142");
  assert.equal(response.status, 200);
  const text = await response.text();
  assert.deepEqual(JSON.parse(text), {
    status: "success",
    country: "United Kingdom",
    countryCode: "GB",
    region: "ENG",
    regionName: "England",
    city: "London",
    zip: "EC2V",
    lat: 51.5142,
    lon: -0.0931,
    timezone: "Europe/London",
    isp: "Andrews & Arnold Ltd",
    org: "Andrews & Arnold Ltd",
    as: "AS20712 Andrews & Arnold Ltd",
    query: "81.2.69.142",
  });
  assert.deepEqual(Object.keys(JSON.parse(text)).at(-1), "query");
});

Deno.test("ip-api: fields by name or numeric bitmask; 66846719 is every field", () => {
  assert.deepEqual([...parseIpApiFields("66846719")], IPAPI_FIELDS.map(([name]) => name));
  assert.deepEqual([...parseIpApiFields(String(16384 + 8192 + 1))].sort(), [
    "country",
    "query",
    "status",
  ]);
  assert.equal(parseIpApiFields(undefined).size, 15);
  assert.equal(parseIpApiFields("61439").size, 15); // ip-api's documented default
  assert.deepEqual([...parseIpApiFields("query, country,bogus")], ["query", "country", "bogus"]);
});

Deno.test("ip-api: every field, security as proxy and hosting, lang names", async () => {
  const { request } = await compatApp();
  const all = await (await request("/json/2a02:ec0::1?fields=66846719&lang=de")).json();
  assert.deepEqual(
    Object.keys(all),
    IPAPI_FIELDS.map(([name]) => name).filter((n) => n !== "message"),
  );
  assert.equal(all.country, "Deutschland");
  assert.equal(all.continent, "Europa");
  assert.equal(all.currency, "EUR");
  assert.equal(all.offset, 7200); // CEST on the fixed date
  assert.deepEqual([all.proxy, all.hosting, all.mobile], [true, true, false]);
  assert.deepEqual([all.district, all.asname, all.reverse], ["", "", ""]);
  const tor = await (await request("/json/81.2.69.142?fields=proxy,hosting,query")).json();
  assert.deepEqual(tor, { proxy: true, hosting: false, query: "81.2.69.142" });
  // A language the database lacks answers English, as ip-api does.
  assert.equal((await (await request("/json/2a02:ec0::1?lang=xx")).json()).country, "Germany");
});

Deno.test('ip-api: failures are status "fail" with its messages, HTTP 200', async () => {
  const { request } = await compatApp();
  const cases: [string, string][] = [
    ["192.168.1.1", "private range"],
    ["fd00::1", "private range"],
    ["::1", "reserved range"],
    ["1.2.3", "invalid query"],
    ["2c0f:ffff::1", "no data"],
  ];
  for (const [query, message] of cases) {
    const response = await request(`/json/${query}?fields=country`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: "fail", message, query }, query);
  }
});

Deno.test("ip-api: /json/ and /json are the caller", async () => {
  const { request } = await compatApp();
  for (const path of ["/json/", "/json"]) {
    assert.equal((await (await request(path)).json()).query, "81.2.69.142", path);
  }
});

Deno.test("ip-api: POST /batch takes strings and {query, fields, lang}, up to 100", async () => {
  const { post } = await compatApp();
  const response = await post("/batch?fields=country,query", [
    "81.2.69.142",
    { query: "2a02:ec0::1", fields: "city,countryCode", lang: "de" },
    { query: "2a02:ec0::1", fields: 2 },
    "10.0.0.256",
  ]);
  assert.deepEqual(await response.json(), [
    { country: "United Kingdom", query: "81.2.69.142" },
    { countryCode: "DE", city: "Berlin" },
    { countryCode: "DE" },
    { status: "fail", message: "invalid query", query: "10.0.0.256" },
  ]);
  const tooMany = await post("/batch", Array.from({ length: 101 }, () => "8.8.8.8"));
  assert.equal(tooMany.status, 400);
  assert.deepEqual(await tooMany.json(), {
    status: "fail",
    message: "Batch of 101 queries: give 1 to 100, as ip-api allows",
  });
  assert.equal((await post("/batch", [{ ip: "8.8.8.8" }])).status, 400);
});

Deno.test("ip-api: the key in `key` or X-API-Key; X-Rl and X-Ttl; 429 as a fail", async () => {
  const { request, post, key } = await compatApp({ limit: 3 });
  const wrong = await request("/json/81.2.69.142?key=nope");
  assert.equal(wrong.status, 401);
  assert.equal((await wrong.json()).status, "fail");
  const ok = await request(`/json/81.2.69.142?key=${key}`);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("x-rl"), "2");
  assert.match(ok.headers.get("x-ttl")!, /^\d+$/);
  assert.equal((await post("/batch", ["8.8.8.8", "9.9.9.9"], { "x-api-key": key })).status, 200);
  const limited = await request(`/json/81.2.69.142?key=${key}`);
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("x-rl"), "0");
  assert.equal((await limited.json()).status, "fail");
});

Deno.test("ip-api: POST /batch reads a JSON array whatever its Content-Type, as ip-api does", async () => {
  const { request } = await compatApp();
  // `curl -X POST -d '["81.2.69.142"]' /batch` sends application/x-www-form-urlencoded.
  for (const type of ["application/x-www-form-urlencoded", "text/plain", null]) {
    const response = await request("/batch", {
      method: "POST",
      headers: type === null ? {} : { "content-type": type },
      body: '["81.2.69.142"]',
    });
    assert.equal(response.status, 200, `${type}`);
    const [first] = await response.json();
    assert.equal(first.countryCode, "GB", `${type}`);
  }
});
