import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import { parse as parseCsv } from "csv-parse/sync";
import { ROUTES } from "../../../src/service/app/app.ts";
import { familyMethods, familyOf } from "../../../src/service/http/route.ts";
import { assertLayout, SPEC_LAYOUT } from "../../_layout.ts";
import { fixtureApp, peer } from "../../_helpers.ts";

const app = await fixtureApp();
const get = (path: string, init?: RequestInit, env?: unknown) =>
  app.request(path, init, env as undefined);
const json = async (path: string, init?: RequestInit, env?: unknown) => {
  const res = await get(path, init, env);
  return { status: res.status, type: res.headers.get("content-type"), body: await res.json() };
};

Deno.test("GET /ip answers the full nested layout with every key present", async () => {
  const { status, type, body } = await json("/ip/81.2.69.142");
  assert.equal(status, 200);
  assert.equal(type, "application/json; charset=utf-8");
  assert.equal(body.success, true);
  assertLayout(body.data, SPEC_LAYOUT); // every key of the spec, in order, at every level
  assert.equal(body.data.geoLocation.city, "London");
  assert.equal(body.data.geoLocation.countryCode, "GB");
  assert.equal(body.data.geoLocation.is_in_eu, false);
  assert.equal(body.data.connection.asn_number, 20712);
  assert.equal(body.data.connection.isp, "Andrews & Arnold Ltd");
  assert.equal(body.data.timezone.time_zone, "Europe/London");
  assert.equal(body.data.timezone.offset, 3600);
  assert.equal(body.data.currency.code, "GBP");
});

Deno.test("GET /ip accepts IPv6 in the path, compressed or not, and answers canonically", async () => {
  for (
    const path of [
      "/ip/2a02:ec0::1",
      "/ip/2A02:0EC0:0000:0000:0000:0000:0000:0001",
      "/ip/2a02%3Aec0%3A%3A1",
    ]
  ) {
    const { status, body } = await json(path);
    assert.equal(status, 200, path);
    assert.equal(body.data.ip, "2a02:ec0::1");
    assert.equal(body.data.geoLocation.is_in_eu, true);
    assert.equal(body.data.timezone.is_dst, true);
  }
});

Deno.test("GET /ip reports an IPv4-mapped IPv6 address as IPv4", async () => {
  const { body } = await json("/ip/::ffff:81.2.69.142");
  assert.equal(body.data.ip, "81.2.69.142");
});

Deno.test("GET /ip answers found-but-partial addresses with nulls", async () => {
  const { status, body } = await json("/ip/9.9.9.9");
  assert.equal(status, 200);
  assert.equal(body.data.geoLocation.country, null);
  assert.equal(body.data.geoLocation.is_in_eu, false);
  assert.equal(body.data.connection.asn_org, "Quad9");
  assert.equal(body.data.timezone.current_time, null);
});

Deno.test("GET /ip finds private ranges an operator's database maps", async () => {
  const { status, body } = await json("/ip/10.1.2.3");
  assert.equal(status, 200);
  assert.equal(body.data.geoLocation.countryCode, "US");
});

const errorCases: { path: string; status: number; includes: string }[] = [
  { path: "/ip/1.2.3", status: 404, includes: '"1.2.3"' },
  { path: "/ip/256.1.1.1", status: 404, includes: '"256.1.1.1"' },
  { path: "/ip/01.2.3.4", status: 404, includes: "leading zero" },
  { path: "/ip/1.2.3.0/24", status: 404, includes: "CIDR" },
  { path: "/ip/fe80::1%25eth0", status: 404, includes: "zone id" },
  { path: "/ip/%201.2.3.4", status: 404, includes: "spaces" },
  { path: "/ip/192.168.1.1", status: 404, includes: "private network" },
  { path: "/ip/127.0.0.1", status: 404, includes: "loopback" },
  { path: "/ip/2001:db8::1", status: 404, includes: "documentation" },
  { path: "/ip/8.8.4.4", status: 404, includes: '"8.8.4.4"' },
  { path: "/ip/81.2.69.142?get=nope", status: 400, includes: '"nope"' },
  { path: "/ip/81.2.69.142?lang=xx", status: 400, includes: '"xx"' },
  { path: "/ip/", status: 400, includes: "Missing IP address" },
  { path: "/bulk/", status: 400, includes: "Empty bulk list" },
  { path: "/nowhere", status: 404, includes: `No route for GET "/nowhere"` },
];

Deno.test("errors answer with the status and a message naming the input", async () => {
  for (const { path, status, includes } of errorCases) {
    const res = await json(path);
    assert.equal(res.status, status, path);
    assert.equal(res.body.success, false, path);
    assert.ok(res.body.message.includes(includes), `${path}: ${res.body.message}`);
    assert.equal(res.type, "application/json; charset=utf-8");
  }
});

Deno.test("an address given with its port is refused with a message saying so, status unchanged", async () => {
  const cases = [
    ["/ip/203.0.113.10:51234", '"203.0.113.10:51234": it carries a port (":51234")'],
    ["/ip/[2001:db8::1]:443", '"[2001:db8::1]:443": it carries a port (":443")'],
  ];
  for (const [path, quoted] of cases) {
    const res = await json(path!);
    assert.equal(res.status, 404, path); // invalid addresses answer 404 (docs/decisions.md)
    assert.equal(res.body.message, `Invalid IP address ${quoted}; give the address alone`);
  }
});

Deno.test("an unknown get name lists the valid names", async () => {
  const { body } = await json("/ip/81.2.69.142?get=city,bogus");
  assert.match(body.message, /bogus/);
  assert.match(body.message, /geoLocation/);
  assert.match(body.message, /currency\.code/);
});

Deno.test("get returns groups nested, bare leaves flat and dotted paths inside their parents", async () => {
  const { body } = await json(
    "/ip/81.2.69.142?get=City, currency.CODE,security,userAgent.browser.name",
  );
  assert.deepEqual(body.data, {
    ip: "81.2.69.142",
    city: "London",
    currency: { code: "GBP" },
    userAgent: { browser: { name: null } },
    security: { isVpn: null, isTor: null, isThreat: null }, // no security feed in the fixtures
  });
});

Deno.test("get applies to /bulk items and /me", async () => {
  const bulk = await json("/bulk/81.2.69.142,bad?get=countryCode");
  assert.deepEqual(bulk.body.data.responseArray[0], { ip: "81.2.69.142", countryCode: "GB" });
  assert.equal(bulk.body.data.responseArray[1].error.status, 404);
  const me = await json("/me?get=countryCode", undefined, peer("81.2.69.142"));
  assert.deepEqual(me.body.data, { ip: "81.2.69.142", countryCode: "GB" });
});

Deno.test("lang returns place names in another language, falling back to English", async () => {
  const { body } = await json("/ip/81.2.69.142?lang=DE&get=country,city,region");
  assert.deepEqual(body.data, {
    ip: "81.2.69.142",
    country: "Vereinigtes Königreich",
    region: "England",
    city: "London",
  });
});

Deno.test("format=xml gives a well-formed document with the envelope, nulls as empty elements", async () => {
  const res = await get("/ip/9.9.9.9?format=XML");
  assert.equal(res.headers.get("content-type"), "application/xml; charset=utf-8");
  const text = await res.text();
  assert.ok(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>'));
  const doc = new XMLParser({ parseTagValue: false }).parse(text);
  assert.equal(doc.response.success, "true");
  assert.equal(doc.response.data.ip, "9.9.9.9");
  assert.equal(doc.response.data.connection.asn_number, "19281");
  assert.equal(doc.response.data.geoLocation.city, "");
});

Deno.test("errors come as XML when XML is asked for", async () => {
  const res = await get("/ip/nope?format=xml");
  assert.equal(res.status, 404);
  const doc = new XMLParser({ parseTagValue: false }).parse(await res.text());
  assert.equal(doc.response.success, "false");
  assert.match(doc.response.message, /nope/);
});

Deno.test("format=csv gives a header and one row with dotted column names", async () => {
  const res = await get("/ip/81.2.69.142?format=Csv");
  assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
  const rows = parseCsv(await res.text(), { columns: true }) as Record<string, string>[];
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!["timezone.time_zone"], "Europe/London");
  assert.equal(rows[0]!["flag.flag_Icon"], "🇬🇧");
  assert.equal(rows[0]!["security.isThreat"], "", "unknown (no feed installed) is an empty cell");
  assert.equal(rows[0]!["geoLocation.is_in_eu"], "false");
});

Deno.test("an unknown format falls back to JSON", async () => {
  const res = await get("/ip/81.2.69.142?format=yaml");
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
});

Deno.test("hostile user agents keep XML and CSV well-formed", async () => {
  const ua =
    'Mozilla/5.0 <script>alert("x")</script> & "quoted", comma\r\nnew line \u0001\u0008 ]]>';
  const xml = await (await get(`/ip/81.2.69.142?format=xml&ua=${encodeURIComponent(ua)}`)).text();
  const doc = new XMLParser({ parseTagValue: false }).parse(xml);
  assert.equal(doc.response.data.ip, "81.2.69.142");
  const csv = await (await get(`/ip/81.2.69.142?format=csv&ua=${encodeURIComponent(ua)}`)).text();
  const rows = parseCsv(csv, { columns: true }) as Record<string, string>[];
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.ip, "81.2.69.142");
});

Deno.test("the user agent comes from ua, else the User-Agent header", async () => {
  const chrome =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
  const iphone =
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
  const fromQuery = await json(`/ip/81.2.69.142?get=userAgent&ua=${encodeURIComponent(chrome)}`, {
    headers: { "user-agent": iphone },
  });
  assert.equal(fromQuery.body.data.userAgent.browser.name, "Chrome");
  assert.equal(fromQuery.body.data.userAgent.device.type, "desktop");
  const fromHeader = await json("/ip/81.2.69.142?get=userAgent", {
    headers: { "user-agent": iphone },
  });
  assert.equal(fromHeader.body.data.userAgent.os.name, "iOS");
  assert.equal(fromHeader.body.data.userAgent.device.type, "mobile");
});

Deno.test("bulk keeps order and duplicates, and reports failed items in place", async () => {
  const { status, body } = await json(
    "/bulk/81.2.69.142%2C1.2.3,2a02:ec0::1,81.2.69.142,192.168.0.1",
  );
  assert.equal(status, 200);
  const items = body.data.responseArray;
  assert.deepEqual(items.map((i: { ip: string }) => i.ip), [
    "81.2.69.142",
    "1.2.3",
    "2a02:ec0::1",
    "81.2.69.142",
    "192.168.0.1",
  ]);
  assert.equal(items[1].error.status, 404);
  assert.match(items[1].error.message, /"1\.2\.3"/);
  assert.match(items[4].error.message, /private network/);
  assert.equal(items[2].geoLocation.countryCode, "DE");
});

Deno.test("a GET list over IPINTEL_BULK_MAX is streamed, not refused", async () => {
  const small = await fixtureApp({ config: { bulkMax: 2 } });
  const res = await small.request("/bulk/9.9.9.9,9.9.9.9,9.9.9.9");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-length"), null, "streamed");
  assert.equal((await res.json()).data.responseArray.length, 3);
});

Deno.test("bulk renders as XML items and CSV rows", async () => {
  const xml = await (await get("/bulk/81.2.69.142,bad?format=xml")).text();
  const doc = new XMLParser({ parseTagValue: false }).parse(xml);
  assert.equal(doc.response.data.responseArray.item.length, 2);
  assert.equal(doc.response.data.responseArray.item[1].error.status, "404");
  const csv = await (await get("/bulk/81.2.69.142,bad?format=csv")).text();
  const rows = parseCsv(csv, { columns: true }) as Record<string, string>[];
  assert.deepEqual(rows.map((r) => r.ip), ["81.2.69.142", "bad"]);
  assert.equal(rows[1]!["error.status"], "404");
  assert.equal(rows[0]!["error.status"], "");
});

Deno.test("POST /bulk takes a JSON list", async () => {
  const { status, body } = await json("/bulk?get=countryCode", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ips: ["2a02:ec0::5", "81.2.69.1"] }),
  });
  assert.equal(status, 200);
  assert.deepEqual(body.data.responseArray, [
    { ip: "2a02:ec0::5", countryCode: "DE" },
    { ip: "81.2.69.1", countryCode: "GB" },
  ]);
});

Deno.test("POST /bulk refuses malformed bodies, and answers long ones", async () => {
  const post = (body: string) =>
    json("/bulk", { method: "POST", headers: { "content-type": "application/json" }, body });
  assert.equal((await post("{not json")).status, 400);
  assert.equal((await post('{"ips": "8.8.8.8"}')).status, 400);
  assert.equal((await post('{"ips": []}')).status, 400);
  const huge = JSON.stringify({ ips: Array(2000).fill("81.2.69.142".padEnd(60)) });
  const long = await post(huge);
  assert.equal(long.status, 200);
  assert.equal(long.body.data.responseArray.length, 2000);
});

Deno.test("/me looks up the TCP peer and ignores X-Forwarded-For from untrusted peers", async () => {
  const { body } = await json(
    "/me",
    { headers: { "x-forwarded-for": "2a02:ec0::1" } },
    peer("81.2.69.142"),
  );
  assert.equal(body.data.ip, "81.2.69.142");
});

Deno.test("/me believes the configured forwarding header only from trusted proxies", async () => {
  const proxied = await fixtureApp({ config: { trustedProxies: ["127.0.0.0/8", "10.0.0.0/8"] } });
  const me = async (headers: Record<string, string>, from = "127.0.0.1") =>
    (await (await proxied.request("/me", { headers }, peer(from))).json()).data?.ip;
  assert.equal(await me({ "x-forwarded-for": "9.9.9.9, 81.2.69.142, 10.0.0.7" }), "81.2.69.142");
  assert.equal(await me({ "x-forwarded-for": "81.2.69.142" }, "9.9.9.9"), "9.9.9.9");
  // Forwarded is read only when it is the configured header (tests/service/http/client_address_test.ts).
  const viaForwarded = await fixtureApp({
    config: { trustedProxies: ["127.0.0.0/8", "10.0.0.0/8"], forwardedHeader: "forwarded" },
  });
  const forwarded = { forwarded: 'for="[2a02:ec0::9]:4711", for=10.1.1.1' };
  const res = await viaForwarded.request("/me", { headers: forwarded }, peer("127.0.0.1"));
  assert.equal((await res.json()).data.ip, "2a02:ec0::9");
});

Deno.test("a trusted-proxy entry that is not a CIDR fails at start-up, naming it", async () => {
  await assert.rejects(
    () => fixtureApp({ config: { trustedProxies: ["10.0.0.0/33"] } }),
    /10\.0\.0\.0\/33/,
  );
});

Deno.test("lookups answer 503 while the data is not loaded", async () => {
  const loading = await fixtureApp({ slot: { current: null }, config: { bulkMax: 10 } });
  for (const path of ["/ip/8.8.8.8", "/bulk/8.8.8.8", "/ready"]) {
    const res = await loading.request(path);
    assert.equal(res.status, 503, path);
    assert.match((await res.json()).message, /not loaded/);
  }
  assert.equal((await loading.request("/health")).status, 200, "alive while loading");
});

Deno.test("CORS allows browsers by default, on answers, errors and preflights", async () => {
  for (const path of ["/ip/81.2.69.142", "/ip/nope", "/health"]) {
    const res = await get(path, { headers: { origin: "https://example.org" } });
    assert.equal(res.headers.get("access-control-allow-origin"), "*", path);
  }
  const preflight = await get("/bulk", {
    method: "OPTIONS",
    headers: { origin: "https://example.org", "access-control-request-method": "POST" },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
});

Deno.test("CORS with a configured origin list allows only those origins", async () => {
  const strict = await fixtureApp({
    config: { bulkMax: 10, corsOrigins: ["https://app.example"] },
  });
  const allowed = await strict.request("/ip/81.2.69.142", {
    headers: { origin: "https://app.example" },
  });
  assert.equal(allowed.headers.get("access-control-allow-origin"), "https://app.example");
  const other = await strict.request("/ip/81.2.69.142", {
    headers: { origin: "https://evil.example" },
  });
  assert.equal(other.headers.get("access-control-allow-origin"), null);
});

Deno.test("/ready lists the loaded databases with their attribution", async () => {
  const { status, body } = await json("/ready");
  assert.equal(status, 200);
  assert.deepEqual(body.data.databases.map((d: { kind: string }) => d.kind), ["city", "asn"]);
  assert.ok(body.data.databases.every((d: { attribution: string }) => d.attribution));
});

Deno.test("/openapi.json documents every route of the table, with exactly its methods", async () => {
  const { body } = await json("/openapi.json");
  assert.equal(body.openapi, "3.1.0");
  assert.deepEqual(Object.keys(body.paths), ROUTES.map((r) => r.path));
  for (const family of new Set(ROUTES.map(familyOf))) {
    // A compatible API's family documents each of its paths; together they have its methods.
    const documented = new Set(
      ROUTES.filter((r) => familyOf(r) === family).flatMap((r) =>
        Object.keys(body.paths[r.path]).filter((k) => k !== "parameters")
      ),
    );
    const methods = familyMethods(ROUTES, family).map((m) => m.toLowerCase());
    assert.deepEqual([...documented], methods, family);
  }
});
