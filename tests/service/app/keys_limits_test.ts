import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import {
  AccessControl,
  type AccessPolicy,
  anonymousBucket,
} from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { type KeyStore, KvKeyStore, MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { KvRateCounters, MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { fixtureApp, fixtureDataSet, fixtureLookup, peer } from "../../_helpers.ts";

const services = { current: servedOf(await fixtureDataSet(), await fixtureLookup()) };
const config = { bulkMax: 100 };

/** An app over in-memory keys and counters, on a clock the test controls. */
async function setup(policy: Partial<AccessPolicy> = {}, store: KeyStore = new MemoryKeyStore()) {
  const clock = { ms: 60_000 * 1000 };
  const keys = new KeyTable(store);
  await keys.refresh();
  const limiter = new RateLimiter({ counters: new MemoryRateCounters(), now: () => clock.ms });
  const access = new AccessControl(
    { auth: "auto", rateLimit: 5, rateWindow: 60, anonRateLimit: 3, ...policy },
    keys,
    limiter,
  );
  const errors: unknown[] = [];
  const app = await fixtureApp({ slot: services, config, access, logError: (e) => errors.push(e) });
  const fast = app.fetch;
  const get = (path: string, headers: Record<string, string> = {}, from = "203.0.113.9") =>
    fast(new Request(`http://localhost${path}`, { headers }), peer(from));
  return { store, keys, limiter, app, fast, get, clock, errors };
}

const body = async (response: Response) => ({
  status: response.status,
  json: await response.json(),
});

Deno.test("with no key in the store, auth is off: lookups answer without limits or headers", async () => {
  const { get } = await setup();
  const response = await get("/ip/81.2.69.142");
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("ratelimit-limit"), null);
});

Deno.test("once a key exists, keyless and wrong-key calls get 401 on every lookup route", async () => {
  const { store, keys, get, fast } = await setup();
  await store.create({ name: "acme" });
  await keys.refresh();
  for (
    const path of [
      "/ip/81.2.69.142",
      "/me",
      "/bulk/81.2.69.142,9.9.9.9",
      "/ip/81.2.69.142?get=city",
      "/status", // what is installed, and from where, is for callers with a key too
    ]
  ) {
    const { status, json } = await body(await get(path));
    assert.equal(status, 401, path);
    assert.equal(json.success, false);
    assert.match(json.message, /Invalid or missing API key/);
    assert.equal((await get(path, { "x-api-key": "ipi_wrong" })).status, 401, path);
  }
  const post = await fast(
    new Request("http://localhost/bulk", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ips: ["81.2.69.142"] }),
    }),
    peer("203.0.113.9"),
  );
  assert.equal(post.status, 401);
  const postIp = await fast(
    new Request("http://localhost/ip/81.2.69.142", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userAgent: "curl/8" }),
    }),
    peer("203.0.113.9"),
  );
  assert.equal(postIp.status, 401, "POST /ip/{ip} too");
  // The open routes stay open: liveness, readiness, the API's description.
  for (const path of ["/health", "/ready", "/openapi.json"]) {
    assert.equal((await get(path)).status, 200, path);
  }
});

Deno.test("a 401 comes in the requested format", async () => {
  const { store, keys, get } = await setup();
  await store.create({ name: "acme" });
  await keys.refresh();
  const response = await get("/ip/81.2.69.142?format=xml");
  assert.equal(response.status, 401);
  assert.match(response.headers.get("content-type")!, /^application\/xml/);
  const parsed = new XMLParser().parse(await response.text());
  assert.equal(parsed.response.success, false);
  assert.match(parsed.response.message, /Invalid or missing API key/);
});

Deno.test("the key is read from apiKey, X-API-Key or Authorization: Bearer; the query wins", async () => {
  const { store, keys, get } = await setup({ auth: "required" });
  const { key } = await store.create({ name: "acme" });
  await keys.refresh();
  assert.equal((await get(`/ip/81.2.69.142?apiKey=${key}`)).status, 200);
  assert.equal((await get("/ip/81.2.69.142", { "x-api-key": key })).status, 200);
  assert.equal((await get("/ip/81.2.69.142", { authorization: `Bearer ${key}` })).status, 200);
  assert.equal((await get("/ip/81.2.69.142", { authorization: `Basic ${key}` })).status, 401);
  assert.equal((await get("/ip/81.2.69.142?apiKey=ipi_bad", { "x-api-key": key })).status, 401);
  assert.equal((await get(`/ip/81.2.69.142?apiKey=${key}`, { "x-api-key": "bad" })).status, 200);
});

Deno.test("limited answers carry RateLimit headers; over the limit is 429 with Retry-After", async () => {
  const { store, keys, get } = await setup({ auth: "required", rateLimit: 3 });
  const { key } = await store.create({ name: "acme" });
  await keys.refresh();
  const headers = { "x-api-key": key };
  const seen = [];
  for (let i = 0; i < 3; i++) {
    const response = await get("/ip/81.2.69.142", headers);
    assert.equal(response.status, 200);
    seen.push(response.headers.get("ratelimit-remaining"));
    assert.equal(response.headers.get("ratelimit-limit"), "3");
    assert.ok(Number(response.headers.get("ratelimit-reset")) > 0);
  }
  assert.deepEqual(seen, ["2", "1", "0"]);
  const limited = await get("/ip/81.2.69.142", headers);
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("retry-after"), "60"); // a unit frees one window after it was spent
  assert.equal(limited.headers.get("ratelimit-remaining"), "0");
  const { json } = await body(limited);
  assert.deepEqual(Object.keys(json), ["success", "message"]);
  assert.match(json.message, /Rate limit exceeded: 3 requests per 60 s .*retry in 60 s/);
  // The same refusal on every lookup route, in the requested format.
  assert.equal((await get("/me", headers)).status, 429);
  const xml = await get("/ip/81.2.69.142?format=xml", headers);
  assert.equal(xml.status, 429);
  assert.match(await xml.text(), /<message>Rate limit exceeded/);
});

Deno.test("a key's own limit and window win over the defaults", async () => {
  const { store, keys, get } = await setup({ auth: "required", rateLimit: 1 });
  const { key } = await store.create({ name: "big", limit: 4, window: 10 });
  await keys.refresh();
  const response = await get("/ip/81.2.69.142", { "x-api-key": key });
  assert.equal(response.headers.get("ratelimit-limit"), "4");
  assert.equal(response.headers.get("ratelimit-remaining"), "3");
});

Deno.test("a bulk call costs one unit per address; a whole one is refused whole, a stream stops", async () => {
  const { store, keys, get, fast, clock } = await setup({ auth: "required", rateLimit: 5 });
  const { key } = await store.create({ name: "acme" });
  await keys.refresh();
  const headers = { "x-api-key": key };
  const first = await get("/bulk/81.2.69.142,9.9.9.9,1.2.3", headers);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("ratelimit-remaining"), "2");
  const tooMany = await fast(
    new Request("http://localhost/bulk", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ ips: ["81.2.69.142", "9.9.9.9", "1.1.1.1"] }),
    }),
    peer("203.0.113.9"),
  );
  // POST streams: the two units left are answered, then the final record says why it stopped.
  assert.equal(tooMany.status, 200);
  const { data } = await tooMany.json();
  assert.equal(data.responseArray.length, 2);
  assert.equal(data.incomplete.status, 429);
  assert.equal(data.incomplete.answered, 2);
  assert.equal((await get("/bulk/81.2.69.142,9.9.9.9", headers)).status, 429);
  clock.ms += 120_000;
  assert.equal((await get("/bulk/81.2.69.142,9.9.9.9", headers)).status, 200);
  const never = await get(`/bulk/${Array(6).fill("9.9.9.9").join(",")}`, headers);
  assert.equal(never.status, 429);
  assert.match((await never.json()).message, /send at most 5 addresses at once/);
});

Deno.test("optional mode serves keyless callers per address (IPv6 per /64) and still refuses wrong keys", async () => {
  const { store, keys, get } = await setup({ auth: "optional", anonRateLimit: 2 });
  await store.create({ name: "acme" });
  await keys.refresh();
  assert.equal((await get("/ip/81.2.69.142", { "x-api-key": "ipi_wrong" })).status, 401);
  const v6a = "2001:db8:1:2::1", v6b = "2001:db8:1:2:ffff::9", v6other = "2001:db8:1:3::1";
  assert.equal((await get("/ip/81.2.69.142", {}, v6a)).headers.get("ratelimit-remaining"), "1");
  assert.equal((await get("/ip/81.2.69.142", {}, v6b)).headers.get("ratelimit-remaining"), "0");
  assert.equal((await get("/ip/81.2.69.142", {}, v6a)).status, 429, "same /64, one budget");
  assert.equal((await get("/ip/81.2.69.142", {}, v6other)).status, 200, "another /64");
  assert.equal((await get("/ip/81.2.69.142", {}, "192.0.2.1")).status, 200);
  assert.equal(anonymousBucket("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  assert.equal(anonymousBucket("::ffff:192.0.2.1"), "192.0.2.1");
});

Deno.test("allowed, refused and limited requests, each with its RateLimit headers", async () => {
  const store = new MemoryKeyStore();
  const { key } = await store.create({ name: "acme" });
  const one = await setup({ auth: "required", rateLimit: 40 }, store);
  const cases: [string, Record<string, string>][] = [
    ["/ip/81.2.69.142", {}], // 401: no key
    ["/ip/81.2.69.142?format=xml", {}], // 401 in XML
    ["/ip/81.2.69.142", { "x-api-key": "ipi_nope" }], // 401: wrong key
    ["/ip/1.2.3", { "x-api-key": key }], // 404 after the charge
  ];
  const paths = [
    "/ip/81.2.69.142",
    "/ip/2a02:ec0::1?format=xml",
    "/ip/2a02:ec0::1",
    "/ip/81.2.69.142?format=csv",
    "/ip/81.2.69.142?get=city,security",
  ];
  for (let i = 0; i < 42; i++) {
    cases.push([paths[i % paths.length]!, { authorization: `Bearer ${key}` }]);
  } // 39 × 200, then 429 × 3
  const statuses = new Map<number, number>();
  for (const [path, headers] of cases) {
    const response = await one.get(path, headers);
    const body = await response.text();
    const charged = response.status !== 401;
    assert.equal(response.headers.get("ratelimit-limit") !== null, charged, path);
    if (path.includes("format=xml")) assert.ok(body.startsWith("<?xml"), path);
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  }
  assert.deepEqual(Object.fromEntries(statuses), { 401: 3, 404: 1, 200: 39, 429: 3 });
});

Deno.test("a revoked or rotated key is refused once the table has refreshed", async () => {
  const { store, keys, get } = await setup({ auth: "required" });
  const a = await store.create({ name: "a" });
  const b = await store.create({ name: "b" });
  await keys.refresh();
  assert.equal((await get("/ip/81.2.69.142", { "x-api-key": a.key })).status, 200);
  await store.revoke(a.record.id);
  const rotated = await store.rotate(b.record.id);
  assert.equal(await keys.refresh(), true);
  assert.equal((await get("/ip/81.2.69.142", { "x-api-key": a.key })).status, 401, "revoked");
  assert.equal((await get("/ip/81.2.69.142", { "x-api-key": b.key })).status, 401, "rotated away");
  assert.equal((await get("/ip/81.2.69.142", { "x-api-key": rotated.key })).status, 200);
  assert.equal(await keys.refresh(), false, "nothing changed: nothing reread");
});

Deno.test("a revocation and a rotation on one instance reach another sharing the KV file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-keys-" });
  const kvA = await Deno.openKv(`${dir}/shared.kv`);
  let kvB: Deno.Kv | null = null;
  try {
    const storeA = new KvKeyStore(kvA);
    const a = await storeA.create({ name: "a" });
    const b = await storeA.create({ name: "b" });
    // Opened once the file exists: two handles creating one new SQLite file at the same
    // moment can meet "database is locked" (seen once in CI), which is not what this tests.
    kvB = await Deno.openKv(`${dir}/shared.kv`);
    const other = await setup({ auth: "required" }, new KvKeyStore(kvB)); // the second instance
    assert.equal((await other.get("/ip/81.2.69.142", { "x-api-key": a.key })).status, 200);
    await storeA.revoke(a.record.id);
    const rotated = await storeA.rotate(b.record.id);
    assert.equal(await other.keys.refresh(), true, "the change counter moved");
    assert.equal((await other.get("/ip/81.2.69.142", { "x-api-key": a.key })).status, 401);
    assert.equal((await other.get("/ip/81.2.69.142", { "x-api-key": b.key })).status, 401);
    assert.equal((await other.get("/ip/81.2.69.142", { "x-api-key": rotated.key })).status, 200);
  } finally {
    kvA.close();
    kvB?.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no error message or logged error holds a key", async () => {
  const { store, keys, get, errors } = await setup({ auth: "required", rateLimit: 1 });
  const { key } = await store.create({ name: "acme" });
  await keys.refresh();
  const texts: string[] = [];
  for (
    const [path, headers] of [
      [`/ip/81.2.69.142?apiKey=${key}x`, {}],
      [`/ip/81.2.69.142?apiKey=${key}`, {}],
      [`/ip/81.2.69.142?apiKey=${key}`, {}], // 429
      [`/ip/1.2.3?apiKey=${key}`, {}],
      [`/nowhere?apiKey=${key}`, {}],
      ["/ip/81.2.69.142", { "x-api-key": `${key}x` }],
    ] as [string, Record<string, string>][]
  ) {
    texts.push(await (await get(path, headers)).text());
  }
  texts.push(...errors.map(String));
  for (const text of texts) assert.ok(!text.includes(key), text);
});

Deno.test("two app instances on one KV file share a key's budget within the stated bound", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-two-apps-" });
  const handles = [await Deno.openKv(`${dir}/shared.kv`), await Deno.openKv(`${dir}/shared.kv`)];
  try {
    const { key } = await new KvKeyStore(handles[0]!).create({ name: "shared", limit: 50 });
    const instances = await Promise.all(handles.map(async (kv) => {
      const keys = new KeyTable(new KvKeyStore(kv));
      await keys.refresh();
      const limiter = new RateLimiter({ counters: new KvRateCounters(kv) });
      const access = new AccessControl(
        { auth: "required", rateLimit: 1000, rateWindow: 60, anonRateLimit: 0 },
        keys,
        limiter,
      );
      return (await fixtureApp({ slot: services, config, access })).fetch;
    }));
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) {
      const handler = instances[i % 2]!;
      const request = new Request("http://localhost/ip/81.2.69.142", {
        headers: { "x-api-key": key },
      });
      const response = await handler(request, peer("203.0.113.9"));
      await response.body?.cancel();
      statuses.push(response.status);
    }
    const admitted = statuses.filter((s) => s === 200).length;
    // The README's bound for N instances: at most N × (10% of the limit + 1) over the limit.
    assert.ok(admitted >= 50, `${admitted} admitted: none refused below the limit`);
    assert.ok(admitted <= 50 + 2 * (0.1 * 50 + 1), `${admitted} admitted`);
    assert.equal(statuses.at(-1), 429);
  } finally {
    for (const kv of handles) kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A streamed `POST /bulk` whose body the test writes as it goes: `first`
 * lines at once (the first batch decides the status, so the answer starts
 * only once it is there), more with `send`.
 */
async function openStream(
  app: { fetch: (request: Request, env: ReturnType<typeof peer>) => Response | Promise<Response> },
  key: string,
  first: number,
) {
  let push!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (push = c) });
  const send = (n: number) => push.enqueue(new TextEncoder().encode("81.2.69.142\n".repeat(n)));
  send(first);
  const response = await app.fetch(
    new Request("http://localhost/bulk?format=ndjson", {
      method: "POST",
      headers: { "content-type": "text/plain", "x-api-key": key },
      body,
    }),
    peer("203.0.113.9"),
  );
  return { response, send, end: () => push.close() };
}

Deno.test("a running stream checks its key at every batch: revoked mid-stream, it ends with a 401 record", async () => {
  const { store, keys, app } = await setup({ auth: "required", rateLimit: 1000 });
  const { key, record } = await store.create({ name: "stream" });
  await keys.refresh();
  const stream = await openStream(app, key, 10);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await store.revoke(record.id);
  assert.equal(await keys.refresh(), true);
  stream.send(10);
  stream.end();
  const lines = (await stream.response.text()).trim().split("\n").map((l) => JSON.parse(l));
  const stop = lines.at(-1).incomplete;
  assert.equal(stop.status, 401, JSON.stringify(lines.at(-1)));
  assert.match(stop.message, /Invalid or missing API key/);
  assert.equal(lines.length - 1, stop.answered, "answered up to the revocation, then stopped");
  assert.ok(stop.answered >= 10 && stop.answered < 20, `${stop.answered} answered`);
});

Deno.test("a running stream follows its key's new limit", async () => {
  const { store, keys, app } = await setup({ auth: "required", rateLimit: 1000 });
  const { key, record } = await store.create({ name: "stream" });
  await keys.refresh();
  const stream = await openStream(app, key, 15);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await store.setLimits(record.id, { limit: 20, window: 60 });
  assert.equal(await keys.refresh(), true);
  stream.send(15);
  stream.end();
  const lines = (await stream.response.text()).trim().split("\n").map((l) => JSON.parse(l));
  const stop = lines.at(-1).incomplete;
  assert.equal(stop?.status, 429, JSON.stringify(lines.at(-1)));
  assert.equal(stop.answered, 20, "15 under the old limit, then 5 more under the new one");
});
