import assert from "node:assert/strict";
import { AccessControl } from "../../src/access/access.ts";
import { KeyTable } from "../../src/access/key_table.ts";
import { RateLimiter } from "../../src/access/rate_limiter.ts";
import { createApp } from "../../src/http/app.ts";
import { Metrics } from "../../src/ops/metrics.ts";
import { createLookup, type Lookup, type LookupOptions } from "../../src/lookup/lookup.ts";
import { MemoryKeyStore } from "../../src/store/keys.ts";
import { MemoryRateCounters } from "../../src/store/rate_counts.ts";
import type { LookupResult } from "../../src/types.ts";
import { createUserAgentParser } from "../../src/ua/parse.ts";
import { CHROME, FIXED_NOW, fixtureDataSet, peer } from "../_helpers.ts";

const data = await fixtureDataSet();
const config = {
  bulkMax: 100,
  trustedProxies: [],
  forwardedHeader: "x-forwarded-for" as const,
  corsOrigins: ["*"],
};

/** A lookup over the fixtures on a clock the test moves, counting the lookups it does. */
function countedLookup(clock: { ms: number }) {
  const inner = createLookup({
    data,
    now: () => new Date(clock.ms),
    parseUserAgent: createUserAgentParser(),
  });
  const calls = { lookups: 0, renews: 0 };
  const lookup: Lookup = Object.assign((ip: string, options?: LookupOptions) => {
    calls.lookups++;
    return inner(ip, options);
  }, {
    detail: inner.detail,
    renew: (result: LookupResult) => {
      calls.renews++;
      return inner.renew(result);
    },
  });
  return { lookup, calls };
}

/** An app (a fresh answer cache) over a counted lookup; `text` answers status and body. */
function setup(clock = { ms: FIXED_NOW.getTime() }) {
  const { lookup, calls } = countedLookup(clock);
  const services = { current: { data, lookup } };
  const app = createApp({ services, config, logError: () => {} });
  const text = async (path: string, headers: Record<string, string> = {}) => {
    const response = await app.fetch(
      new Request(`http://localhost${path}`, { headers }),
      peer("81.2.69.142"),
    );
    return { status: response.status, body: await response.text() };
  };
  return { app, services, calls, clock, text };
}

const REQUESTS = [
  "/ip/81.2.69.142",
  "/ip/81.2.69.142?format=xml",
  "/ip/81.2.69.142?format=csv",
  "/ip/81.2.69.142?get=ip,geoLocation.city,timezone.current_time",
  "/ip/81.2.69.142?get=risk",
  "/ip/81.2.69.142?lang=de",
  "/ip/2a02:ec0::1",
  "/ip/1.1.1.1",
  "/me",
];

Deno.test("a kept answer is byte for byte the answer of a fresh lookup, in every format", async () => {
  const cached = setup();
  for (const path of REQUESTS) {
    for (const headers of [{}, { "user-agent": CHROME }] as Record<string, string>[]) {
      const first = await cached.text(path, headers);
      const lookups = cached.calls.lookups;
      const again = await cached.text(path, headers);
      assert.equal(cached.calls.lookups, lookups, `${path}: answered from the cache`);
      const fresh = await setup().text(path, headers); // a new app: an empty cache
      assert.equal(first.status, 200, path);
      assert.equal(again.body, fresh.body, path);
      assert.equal(first.body, fresh.body, path);
    }
  }
});

Deno.test("the user agent, lang and get are part of what is kept", async () => {
  const { text, calls } = setup();
  const plain = await text("/ip/81.2.69.142");
  const chrome = await text("/ip/81.2.69.142", { "user-agent": CHROME });
  const byQuery = await text(`/ip/81.2.69.142?ua=${encodeURIComponent(CHROME)}`);
  assert.notEqual(chrome.body, plain.body);
  assert.match(chrome.body, /Chrome/);
  assert.doesNotMatch(plain.body, /Chrome/);
  assert.equal(byQuery.body, chrome.body);
  assert.notEqual((await text("/ip/81.2.69.142?lang=de")).body, plain.body);
  assert.notEqual((await text("/ip/81.2.69.142?get=ip")).body, plain.body);
  // `ua` and the header name the same user agent: one answer, looked up once.
  assert.equal(calls.lookups, 4, "each different request looked up once");
  assert.equal((await text("/ip/81.2.69.142", { "user-agent": CHROME })).body, chrome.body);
  assert.equal(calls.lookups, 4);
});

Deno.test("the time-zone part follows the clock: a new second is a new current_time", async () => {
  const { text, clock, calls } = setup();
  const at = (body: string) => JSON.parse(body).data.timezone.current_time;
  const first = await text("/ip/81.2.69.142");
  assert.equal(at(first.body), "2026-07-01T13:00:00+01:00");
  clock.ms += 400; // the same second: the kept body as it was
  assert.equal((await text("/ip/81.2.69.142")).body, first.body);
  clock.ms += 600; // the next second
  const next = await text("/ip/81.2.69.142");
  assert.equal(at(next.body), "2026-07-01T13:00:01+01:00");
  const fresh = setup({ ms: clock.ms });
  assert.equal(next.body, (await fresh.text("/ip/81.2.69.142")).body);
  // Months later (summer time over): offset and is_dst change with it.
  clock.ms = Date.parse("2026-12-01T12:00:00Z");
  const winter = JSON.parse((await text("/ip/81.2.69.142")).body).data.timezone;
  assert.equal(winter.offset, 0);
  assert.equal(winter.is_dst, false);
  assert.equal(winter.current_time, "2026-12-01T12:00:00+00:00");
  assert.equal(calls.lookups, 1, "the address was looked up once; the time zone renewed");
});

Deno.test("a reloaded data set starts with nothing kept", async () => {
  const { text, services, clock } = setup();
  const before = await text("/ip/81.2.69.142");
  // A reload installs a new lookup; this one's data says something else about the address.
  const next = countedLookup(clock);
  const changed: Lookup = Object.assign(
    (ip: string, options?: LookupOptions) => ({ ...next.lookup(ip, options), ip: "reloaded" }),
    { detail: next.lookup.detail, renew: next.lookup.renew },
  );
  services.current = { data, lookup: changed };
  const after = await text("/ip/81.2.69.142");
  assert.notEqual(after.body, before.body);
  assert.equal(JSON.parse(after.body).data.ip, "reloaded");
  assert.equal(next.calls.lookups, 1);
});

Deno.test("errors are never kept: each failing request is looked up again", async () => {
  const { text, calls, services } = setup();
  for (const path of ["/ip/127.0.0.1", "/ip/1.2.3", "/ip/81.2.69.142?lang=xx-"]) {
    const first = await text(path);
    const lookups = calls.lookups;
    const again = await text(path);
    assert.notEqual(first.status, 200, path);
    assert.equal(again.status, first.status, path);
    assert.equal(calls.lookups, lookups + 1, `${path}: looked up again`);
  }
  // A lookup that failed once (a data error) answers once it works: nothing of the error stayed.
  const working = services.current.lookup;
  let failures = 1;
  services.current = {
    data,
    lookup: Object.assign((ip: string, options?: LookupOptions) => {
      if (failures-- > 0) throw new Error("a page of the database could not be read");
      return working(ip, options);
    }, { detail: working.detail, renew: working.renew }),
  };
  assert.equal((await text("/ip/9.9.9.9")).status, 500);
  assert.equal((await text("/ip/9.9.9.9")).status, 200);
});

Deno.test("a kept answer still passes admission: the key on every request, the limit counted", async () => {
  const store = new MemoryKeyStore();
  const { key } = await store.create({ name: "acme", limit: 3 });
  const keys = new KeyTable(store);
  await keys.refresh();
  const access = new AccessControl(
    { auth: "required", rateLimit: 100, rateWindow: 60, anonRateLimit: 10 },
    keys,
    new RateLimiter({ counters: new MemoryRateCounters() }),
  );
  const { lookup, calls } = countedLookup({ ms: FIXED_NOW.getTime() });
  const app = createApp({ services: { current: { data, lookup } }, config, access });
  const get = (headers: Record<string, string>) =>
    app.fetch(new Request("http://localhost/ip/81.2.69.142", { headers }), peer("203.0.113.9"));
  const remaining: (string | null)[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await get({ "x-api-key": key });
    assert.equal(response.status, 200);
    remaining.push(response.headers.get("ratelimit-remaining"));
    await response.body?.cancel();
  }
  assert.deepEqual(remaining, ["2", "1", "0"]);
  assert.equal(calls.lookups, 1, "the last two were kept answers");
  const over = await get({ "x-api-key": key });
  assert.equal(over.status, 429);
  await over.body?.cancel();
  for (const headers of [{}, { "x-api-key": "not-a-key" }] as Record<string, string>[]) {
    const response = await get(headers);
    assert.equal(response.status, 401);
    await response.body?.cancel();
  }
  // The key revoked: refused at once, though its answer is kept.
  const [record] = await store.list();
  await store.revoke(record!.id);
  await keys.refresh();
  const revoked = await get({ "x-api-key": key });
  assert.equal(revoked.status, 401);
  await revoked.body?.cancel();
});

Deno.test("a kept answer counts in ipintel_lookups_total like a looked-up one", async () => {
  const metrics = new Metrics({ dataSet: () => data, version: "test" });
  const { lookup, calls } = countedLookup({ ms: FIXED_NOW.getTime() });
  const services = { current: { data, lookup: metrics.countLookups(lookup) } };
  const app = createApp({ services, config });
  for (let i = 0; i < 3; i++) {
    const response = await app.fetch(new Request("http://localhost/ip/81.2.69.142"), peer("::1"));
    assert.equal(response.status, 200);
    await response.body?.cancel();
  }
  assert.equal(calls.lookups, 1);
  assert.match(metrics.render(), /^ipintel_lookups_total 3$/m);
});
