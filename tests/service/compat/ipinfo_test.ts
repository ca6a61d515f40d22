import assert from "node:assert/strict";
import { compatApp } from "./_app.ts";

const LONDON = {
  ip: "81.2.69.142",
  city: "London",
  region: "England",
  country: "GB",
  loc: "51.5142,-0.0931",
  org: "AS20712 Andrews & Arnold Ltd",
  postal: "EC2V",
  timezone: "Europe/London",
  asn: { asn: "AS20712", name: "Andrews & Arnold Ltd", route: "81.2.69.0/24" },
  privacy: { vpn: false, proxy: false, tor: true, relay: false, hosting: false, service: "" },
};

Deno.test("ipinfo: /{ip} and /{ip}/json answer ipinfo's fields; unknown ones are left out", async () => {
  const { request } = await compatApp();
  for (const path of ["/ipinfo/81.2.69.142", "/ipinfo/81.2.69.142/json"]) {
    const response = await request(path);
    assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(await response.json(), LONDON, path);
  }
  // Known only by its registered country (Australia has several zones: none is given).
  assert.deepEqual(await (await request("/ipinfo/1.1.1.1")).json(), {
    ip: "1.1.1.1",
    country: "AU",
    privacy: { vpn: false, proxy: false, tor: false, relay: false, hosting: false, service: "" },
  });
  const vpn = await (await request("/ipinfo/2a02:ec0::1")).json();
  assert.deepEqual([vpn.privacy.vpn, vpn.privacy.hosting], [true, true]);
});

Deno.test("ipinfo: without security sources there is no privacy object", async () => {
  const { request } = await compatApp({ risk: false });
  const body = await (await request("/ipinfo/81.2.69.142")).json();
  assert.equal(body.privacy, undefined);
  assert.equal(body.city, "London");
});

Deno.test("ipinfo: /{ip}/{field} is plain text, objects are JSON, the caller at /, /json and /{field}", async () => {
  const { request } = await compatApp();
  const text = async (path: string) => {
    const response = await request(path);
    return `${response.status} ${response.headers.get("content-type")} ${await response.text()}`;
  };
  assert.equal(await text("/ipinfo/81.2.69.142/city"), "200 text/plain; charset=utf-8 London\n");
  assert.equal(await text("/ipinfo/1.1.1.1/postal"), "200 text/plain; charset=utf-8 undefined\n");
  assert.deepEqual(await (await request("/ipinfo/81.2.69.142/asn")).json(), LONDON.asn);
  assert.equal(await text("/ipinfo/country"), "200 text/plain; charset=utf-8 GB\n");
  for (const path of ["/ipinfo", "/ipinfo/", "/ipinfo/json"]) {
    assert.deepEqual(await (await request(path)).json(), LONDON, path);
  }
  const unknown = await request("/ipinfo/81.2.69.142/hostname");
  assert.equal(unknown.status, 400);
  assert.match((await unknown.json()).error.message, /Unknown field "hostname"/);
});

Deno.test("ipinfo: reserved ranges are bogons; an invalid address is ipinfo's 404 error", async () => {
  const { request } = await compatApp();
  assert.deepEqual(await (await request("/ipinfo/192.168.1.1")).json(), {
    ip: "192.168.1.1",
    bogon: true,
  });
  assert.equal(await (await request("/ipinfo/192.168.1.1/bogon")).text(), "true\n");
  // Found in an operator's database, still a bogon.
  assert.equal((await (await request("/ipinfo/10.0.0.1")).json()).bogon, true);
  assert.deepEqual(await (await request("/ipinfo/2c0f:ffff::1")).json(), { ip: "2c0f:ffff::1" });
  const invalid = await request("/ipinfo/1.2.3");
  assert.equal(invalid.status, 404);
  const body = await invalid.json();
  assert.equal(body.status, 404);
  assert.equal(body.error.title, "Wrong ip");
  assert.match(body.error.message, /Invalid IP address "1\.2\.3"/);
});

Deno.test("ipinfo: POST /batch answers an object keyed by path; filter=1 drops failures", async () => {
  const { post } = await compatApp();
  const paths = ["81.2.69.142", "81.2.69.142/city", "1.2.3", "1.1.1.1/postal"];
  const body = await (await post("/ipinfo/batch", paths)).json();
  assert.deepEqual(body["81.2.69.142"], LONDON);
  assert.equal(body["81.2.69.142/city"], "London");
  assert.equal(body["1.2.3"].error.title, "Wrong ip");
  assert.equal(body["1.1.1.1/postal"], "undefined");
  const filtered = await (await post("/ipinfo/batch?filter=1", paths)).json();
  assert.deepEqual(Object.keys(filtered), ["81.2.69.142", "81.2.69.142/city"]);
  assert.equal((await post("/ipinfo/batch", ["1", "2", "3", "4", "5", "6"])).status, 400);
  assert.equal((await post("/ipinfo/batch", { ips: [] })).status, 400);
});

Deno.test("ipinfo: the key as ?token=, Bearer or X-API-Key; 403 for a wrong one, 429 over the limit", async () => {
  const { request, post, key } = await compatApp({ limit: 4 });
  assert.equal((await request("/ipinfo/81.2.69.142")).status, 403);
  const wrong = await request("/ipinfo/81.2.69.142?token=nope");
  assert.deepEqual(await wrong.json(), {
    status: 403,
    error: {
      title: "Unknown token",
      message:
        "Invalid or missing token: send the ipintel API key as ?token= or Authorization: Bearer",
    },
  });
  assert.equal((await request(`/ipinfo/81.2.69.142?token=${key}`)).status, 200);
  const bearer = { authorization: `Bearer ${key}` };
  assert.equal((await request("/ipinfo/81.2.69.142/city", { headers: bearer })).status, 200);
  // A batch costs one unit per path: two left, three asked.
  const batch = await post("/ipinfo/batch", ["8.8.8.8", "1.1.1.1", "9.9.9.9"], bearer);
  assert.equal(batch.status, 429);
  assert.equal((await batch.json()).error.title, "Rate limit exceeded");
  assert.equal((await request("/ipinfo/json", { headers: { "x-api-key": key } })).status, 200);
});
