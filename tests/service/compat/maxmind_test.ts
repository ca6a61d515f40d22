import assert from "node:assert/strict";
import { CITY_FIXTURES } from "../../_helpers.ts";
import { compatApp } from "./_app.ts";

const basic = (account: string, key: string) => ({
  authorization: `Basic ${btoa(`${account}:${key}`)}`,
});
const fixture = CITY_FIXTURES["81.2.69.0/24"]!;
/** The fixture's values as JSON has them (uint16() wraps a number for the writer). */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value, (_, v) => v?.value ?? v));

Deno.test("city: the City record's own structure, every language, plus traits with the network and ASN", async () => {
  const { request } = await compatApp();
  const response = await request("/geoip/v2.1/city/81.2.69.142");
  assert.equal(response.status, 200);
  assert.equal(
    response.headers.get("content-type"),
    "application/vnd.maxmind.com-city+json; charset=UTF-8; version=2.1",
  );
  const body = await response.json();
  for (const key of ["city", "continent", "country", "postal", "subdivisions"] as const) {
    assert.deepEqual(body[key], asJson(fixture[key]), key);
  }
  assert.equal(body.location.accuracy_radius, 50);
  assert.equal(body.location.time_zone, "Europe/London");
  assert.deepEqual(body.city.names, { en: "London", de: "London", ja: "ロンドン" });
  assert.deepEqual(body.traits, {
    ip_address: "81.2.69.142",
    network: "81.2.69.0/24",
    autonomous_system_number: 20712,
    autonomous_system_organization: "Andrews & Arnold Ltd",
  });
});

Deno.test("country: continent and countries only, traits without the ASN", async () => {
  const { request } = await compatApp();
  const response = await request("/geoip/v2.1/country/2a02:ec0::1");
  assert.equal(
    response.headers.get("content-type"),
    "application/vnd.maxmind.com-country+json; charset=UTF-8; version=2.1",
  );
  const body = await response.json();
  assert.deepEqual(Object.keys(body), ["continent", "country", "traits"]);
  assert.equal(body.country.is_in_european_union, true);
  assert.deepEqual(body.traits, { ip_address: "2a02:ec0::1", network: "2a02:ec0::/29" });
});

Deno.test("insights: anonymizer flags from the security sources, each only when true", async () => {
  const { request } = await compatApp();
  const traits = async (ip: string) =>
    (await (await request(`/geoip/v2.1/insights/${ip}`)).json()).traits;
  const tor = await traits("81.2.69.142");
  assert.equal(tor.is_tor_exit_node, true);
  assert.equal(tor.is_anonymous, true);
  assert.equal(tor.is_anonymous_vpn, undefined);
  const vpn = await traits("2a02:ec0::1");
  assert.deepEqual(
    [vpn.is_anonymous, vpn.is_anonymous_vpn, vpn.is_hosting_provider, vpn.is_tor_exit_node],
    [true, true, true, undefined],
  );
  const clean = await traits("9.9.9.9");
  assert.deepEqual(clean, {
    ip_address: "9.9.9.9",
    network: "9.9.9.0/24",
    autonomous_system_number: 19281,
    autonomous_system_organization: "Quad9",
  });
});

Deno.test("an address only the ASN database knows has traits alone; `me` is the caller", async () => {
  const { request } = await compatApp();
  const body = await (await request("/geoip/v2.1/city/9.9.9.9")).json();
  assert.deepEqual(Object.keys(body), ["traits"]);
  const me = await (await request("/geoip/v2.1/city/me")).json();
  assert.equal(me.traits.ip_address, "81.2.69.142");
});

Deno.test("errors are MaxMind's {code, error} with its statuses", async () => {
  const { request } = await compatApp();
  const error = async (path: string) => {
    const response = await request(path);
    assert.equal(
      response.headers.get("content-type"),
      "application/vnd.maxmind.com-error+json; charset=UTF-8; version=2.0",
    );
    const body = await response.json();
    assert.deepEqual(Object.keys(body), ["code", "error"]);
    return `${response.status} ${body.code}`;
  };
  assert.equal(await error("/geoip/v2.1/city/1.2.3"), "400 IP_ADDRESS_INVALID");
  assert.equal(await error("/geoip/v2.1/country/192.168.1.1"), "400 IP_ADDRESS_RESERVED");
  assert.equal(await error("/geoip/v2.1/insights/2c0f:ffff::1"), "404 IP_ADDRESS_NOT_FOUND");
  // A reserved range an operator's database maps is answered (no special casing).
  assert.equal((await request("/geoip/v2.1/city/10.0.0.1")).status, 200);
});

Deno.test("Basic auth takes the API key as the licence key; limits are the key's, 429 OUT_OF_QUERIES", async () => {
  const { request, key } = await compatApp({ limit: 2 });
  const status = async (headers: Record<string, string>) => {
    const response = await request("/geoip/v2.1/country/81.2.69.142", { headers });
    const body = await response.json();
    return [response.status, body.code ?? body.maxmind?.queries_remaining, response.headers];
  };
  assert.deepEqual((await status({})).slice(0, 2), [401, "AUTHORIZATION_INVALID"]);
  assert.deepEqual((await status(basic("42", "wrong"))).slice(0, 2), [
    401,
    "AUTHORIZATION_INVALID",
  ]);
  const [ok, remaining, headers] = await status(basic("123456", key));
  assert.deepEqual([ok, remaining], [200, 1]);
  assert.equal((headers as Headers).get("ratelimit-limit"), "2");
  // ipintel's own header works too, on the same budget.
  assert.deepEqual((await status({ "x-api-key": key })).slice(0, 2), [200, 0]);
  const [limited, code, limitedHeaders] = await status(basic("0", key));
  assert.deepEqual([limited, code], [429, "OUT_OF_QUERIES"]);
  assert.match((limitedHeaders as Headers).get("retry-after")!, /^\d+$/);
});
