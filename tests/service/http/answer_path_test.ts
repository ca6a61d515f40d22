/**
 * The one answer path (src/service/http/answer_path.ts): every lookup route,
 * native and compatible, refuses in the same order: a bad parameter is a 400
 * before any unit is charged, and a spent key is a 429 before the 503 of data
 * still loading.
 */

import assert from "node:assert/strict";
import { servedOf, type ServedSlot } from "../../../src/service/http/env.ts";
import { PolicyGate } from "../../../src/service/policy/gate.ts";
import {
  fixtureApp,
  fixtureDataSet,
  fixtureLookup,
  keyRequiredAccess,
  peer,
} from "../../_helpers.ts";

/** A request of a lookup route, with the key in the route's own way. */
interface Call {
  name: string;
  path: string;
  method?: "POST";
  body?: string;
  type?: string;
  /** The key's headers (default: X-API-Key). */
  headers?: (key: string) => Record<string, string>;
  /** Sent through the trusted proxy (127.0.0.1) with this X-Forwarded-For. */
  forwarded?: string;
}

const json = "application/json";
const basic = (key: string) => ({ authorization: `Basic ${btoa(`42:${key}`)}` });
const apiKey = (key: string) => ({ "x-api-key": key });

/** Every lookup route, asked well. */
const ROUTES: Call[] = [
  { name: "/ip", path: "/ip/81.2.69.142" },
  { name: "/me", path: "/me" },
  { name: "/", path: "/" },
  { name: "/bulk/{list}", path: "/bulk/81.2.69.142" },
  { name: "/bulk/{list} (streamed)", path: "/bulk/81.2.69.142?format=ndjson" },
  { name: "POST /bulk", path: "/bulk", method: "POST", body: "81.2.69.142\n", type: "text/plain" },
  { name: "/auth", path: "/auth" },
  { name: "/asn", path: "/asn/20712" },
  { name: "MaxMind", path: "/geoip/v2.1/city/81.2.69.142", headers: basic },
  { name: "ip-api", path: "/json/81.2.69.142" },
  { name: "ip-api batch", path: "/batch", method: "POST", body: '["81.2.69.142"]', type: json },
  { name: "ipinfo", path: "/ipinfo/81.2.69.142" },
  {
    name: "ipinfo batch",
    path: "/ipinfo/batch",
    method: "POST",
    body: '["81.2.69.142"]',
    type: json,
  },
];

/** Every lookup route, with a parameter (or body) it refuses. */
const BAD: Call[] = [
  { name: "/ip", path: "/ip/81.2.69.142?get=nope" },
  { name: "/me", path: "/me?get=nope" },
  { name: "/", path: "/?lang=-" },
  { name: "/bulk/{list}", path: "/bulk/81.2.69.142?get=nope" },
  { name: "/bulk/{list} (streamed)", path: "/bulk/81.2.69.142?format=ndjson&get=nope" },
  {
    name: "POST /bulk",
    path: "/bulk?get=nope",
    method: "POST",
    body: "81.2.69.142\n",
    type: "text/plain",
  },
  { name: "POST /bulk (type)", path: "/bulk", method: "POST", body: "x", type: "image/png" },
  { name: "/asn", path: "/asn/20712?get=nope" },
  { name: "ip-api batch", path: "/batch", method: "POST", body: '{"a":1}', type: json },
  { name: "ipinfo", path: "/ipinfo/81.2.69.142/nofield" },
  { name: "ipinfo batch", path: "/ipinfo/batch", method: "POST", body: "{}", type: json },
  // The caller's address is read like a parameter: a malformed forwarding header is a 400 first.
  { name: "/me (forwarded)", path: "/me", forwarded: "junk" },
  { name: "/ (forwarded)", path: "/", forwarded: "junk" },
  { name: "/auth (forwarded)", path: "/auth", forwarded: "junk" },
  {
    name: "MaxMind me (forwarded)",
    path: "/geoip/v2.1/city/me",
    headers: basic,
    forwarded: "junk",
  },
  { name: "ip-api (forwarded)", path: "/json", forwarded: "junk" },
  { name: "ipinfo (forwarded)", path: "/ipinfo", forwarded: "junk" },
];

const POLICY = { default: "allow", cacheSeconds: 60, rules: [] };

/** The app with keys required (`key`: `limit` units a minute) and a forward-auth policy. */
async function orderApp(limit: number) {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-order-" });
  await Deno.writeTextFile(`${dir}/policy.json`, JSON.stringify(POLICY));
  const gate = await PolicyGate.open(`${dir}/policy.json`, { report: () => {} });
  const { access, key } = await keyRequiredAccess("client", limit);
  const slot: ServedSlot = { current: servedOf(await fixtureDataSet(), await fixtureLookup()) };
  const app = await fixtureApp({
    slot,
    access,
    policy: gate,
    config: { bulkMax: 10, trustedProxies: ["127.0.0.1"] },
  });
  const send = async (call: Call) => {
    const headers = {
      ...(call.headers ?? apiKey)(key),
      ...(call.type ? { "content-type": call.type } : {}),
      ...(call.forwarded ? { "x-forwarded-for": call.forwarded } : {}),
    };
    const response = await app.fetch(
      new Request(`http://localhost${call.path}`, {
        method: call.method ?? "GET",
        headers,
        body: call.body,
      }),
      peer(call.forwarded ? "127.0.0.1" : "81.2.69.142"),
    );
    await response.body?.cancel();
    return response;
  };
  const close = async () => {
    gate.close();
    await Deno.remove(dir, { recursive: true });
  };
  return { slot, send, close };
}

Deno.test("every lookup route answers 429 to a spent key before the 503 of data still loading", async () => {
  for (const call of ROUTES) {
    const { slot, send, close } = await orderApp(1);
    try {
      assert.ok((await send(call)).ok, `${call.name}: the one unit`);
      slot.current = null;
      const spent = await send(call);
      assert.equal(spent.status, 429, `${call.name}: spent, while loading`);
    } finally {
      await close();
    }
  }
});

Deno.test("every lookup route answers 503 while loading once the unit is charged, like /ip", async () => {
  for (const call of ROUTES) {
    const { slot, send, close } = await orderApp(2);
    try {
      const loaded = slot.current;
      slot.current = null;
      assert.equal((await send(call)).status, 503, `${call.name}: loading`);
      slot.current = loaded;
      const answered = await send(call);
      assert.ok(answered.ok, call.name);
      assert.equal(answered.headers.get("ratelimit-remaining"), "0", `${call.name}: both charged`);
    } finally {
      await close();
    }
  }
});

Deno.test("every lookup route answers a bad parameter 400 (415) before any unit is charged", async () => {
  const { send, close } = await orderApp(1);
  try {
    for (const call of BAD) {
      const response = await send(call);
      assert.ok([400, 415].includes(response.status), `${call.name}: ${response.status}`);
      assert.equal(response.headers.get("ratelimit-remaining"), null, `${call.name}: no charge`);
    }
    // Nothing was charged: the one unit is still there.
    assert.equal((await send(ROUTES[0]!)).status, 200);
  } finally {
    await close();
  }
});

Deno.test("GET /ip answered from memory makes no promise: the answer path is synchronous when no step waits", async () => {
  const app = await fixtureApp();
  const request = () => new Request("http://localhost/ip/81.2.69.142");
  const answer = app.fetch(request(), peer("203.0.113.9"));
  assert.ok(answer instanceof Response, "a Response, not a promise of one");
  assert.equal(answer.status, 200);
  // A POST reads its body: a promise, and the same answer.
  const posted = app.fetch(
    new Request("http://localhost/ip/81.2.69.142", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    }),
    peer("203.0.113.9"),
  );
  assert.ok(posted instanceof Promise);
  assert.equal(await (await posted).text(), await answer.text());
});
