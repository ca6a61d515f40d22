import assert from "node:assert/strict";
import {
  AccessControl,
  FLOOD_48,
  FLOOD_56,
} from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import {
  type RateDecision,
  RateLimiter,
  SYNC_WAIT_MS,
} from "../../../src/service/keys_limits/rate_limiter.ts";
import {
  RateTable,
  rateTableBuffer,
  SLOT_BYTES,
} from "../../../src/service/keys_limits/rate_table.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { type CounterUpdate, MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";

const T0 = 60_000 * 1000;

Deno.test("isolates that share a table share each caller's budget exactly", async () => {
  const buffer = rateTableBuffer(undefined, T0);
  const counters = new MemoryRateCounters();
  // Two limiters on one buffer, as two workers of one server are.
  const [a, b] = [0, 1].map(() =>
    new RateLimiter({ counters, table: new RateTable(buffer), now: () => T0 })
  );
  const decisions: RateDecision[] = [];
  for (let i = 0; i < 20; i++) decisions.push(await (i % 2 ? a! : b!).consume("k", 7, 60));
  assert.equal(decisions.filter((d) => d.kind === "allowed").length, 7);
  assert.deepEqual(
    decisions.slice(0, 8).map((d) => d.remaining),
    [6, 5, 4, 3, 2, 1, 0, 0],
    "one count, whichever isolate answers",
  );
});

Deno.test("workers in other threads charge the same table exactly", async () => {
  const buffer = rateTableBuffer();
  const dir = await Deno.makeTempDir({ prefix: "ipintel-rate-table-" });
  const source = `
    import { RateLimiter } from "${new URL(
    "../../../src/service/keys_limits/rate_limiter.ts",
    import.meta.url,
  )}";
    import { RateTable } from "${new URL(
    "../../../src/service/keys_limits/rate_table.ts",
    import.meta.url,
  )}";
    import { KvRateCounters } from "${new URL(
    "../../../src/data/store/rate_counts.ts",
    import.meta.url,
  )}";
    self.onmessage = async ({ data }) => {
      const kv = await Deno.openKv(data.kv);
      const limiter = new RateLimiter({ counters: new KvRateCounters(kv), table: new RateTable(data.buffer) });
      let admitted = 0;
      for (let i = 0; i < 400; i++) {
        const region = i % 2 ? "anonymous" : "key";
        const caller = region === "key" ? "key:k" : "ip:192.0.2.1";
        const d = limiter.tryConsume(caller, 100, 60, 1, region) ??
          await limiter.consume(caller, 100, 60, 1, region);
        if (d.kind === "allowed") admitted++;
      }
      await limiter.close();
      kv.close();
      self.postMessage(admitted);
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
  const workers = [0, 1].map(() => new Worker(url, { type: "module" }));
  try {
    const counts = await Promise.all(
      workers.map((worker) =>
        new Promise<number>((resolve, reject) => {
          worker.onmessage = (event) => resolve(event.data);
          worker.onerror = (event) => reject(new Error(event.message));
          worker.postMessage({ buffer, kv: `${dir}/rate.kv` });
        })
      ),
    );
    assert.equal(counts[0]! + counts[1]!, 200, `admitted ${counts}: 100 per caller`);
  } finally {
    for (const worker of workers) worker.terminate();
    URL.revokeObjectURL(url);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the anonymous region is capped: the least recently used caller makes room", async () => {
  const table = new RateTable(rateTableBuffer({ key: 8, anonymous: 64 }, T0));
  const clock = { ms: T0 };
  const limiter = new RateLimiter({
    counters: new MemoryRateCounters(),
    table,
    now: () => clock.ms,
  });
  for (let i = 0; i < 1000; i++) {
    clock.ms += 1;
    assert.equal(limiter.tryConsume(`ip:${i}`, 10, 60, 1, "anonymous")?.kind, "allowed");
  }
  assert.equal(table.bytes, SLOT_BYTES * (3 + 8 + 64), "memory does not grow with callers");
  assert.ok(table.regions.anonymous.evictions >= 1000 - 64);
  // A keyed caller is never evicted by anonymous ones.
  await limiter.consume("key:a", 10, 60);
  for (let i = 0; i < 1000; i++) limiter.tryConsume(`ip:x${i}`, 10, 60, 1, "anonymous");
  assert.ok(limiter.has("key:a", 60, "key"));
  assert.equal(table.regions.key.evictions, 0);
});

Deno.test("a new anonymous caller is decided at once; a new key waits for its shared count", () => {
  const limiter = new RateLimiter({ counters: new MemoryRateCounters(), now: () => T0 });
  assert.equal(limiter.tryConsume("ip:192.0.2.1", 10, 60, 1, "anonymous")?.kind, "allowed");
  assert.equal(limiter.tryConsume("key:k", 10, 60, 1, "key"), null);
});

Deno.test("a flood from one IPv6 prefix is grouped per /56, then per /48", async () => {
  const limiter = new RateLimiter({ counters: new MemoryRateCounters(), now: () => T0 });
  const access = new AccessControl(
    { auth: "optional", rateLimit: 100, rateWindow: 60, anonRateLimit: 5 },
    new KeyTable(new MemoryKeyStore()),
    limiter,
  );
  const idOf = async (address: string) => {
    const caller = access.identify(null, () => address)!;
    await access.charge(caller, 1);
    return caller.id;
  };
  assert.equal(await idOf("2001:db8:1:100::1"), "ip:2001:db8:1:100::/64");
  for (let i = 1; i < FLOOD_56; i++) {
    await idOf(`2001:db8:1:1${i.toString(16).padStart(2, "0")}::1`);
  }
  assert.equal(await idOf("2001:db8:1:1ff::1"), "ip:2001:db8:1:100::/56", "the /56 floods");
  assert.equal(await idOf("2001:db8:1:100::1"), "ip:2001:db8:1:100::/56", "its /64s too");
  assert.equal(await idOf("2001:db8:1:200::1"), "ip:2001:db8:1:200::/64", "another /56 is apart");
  for (let n = 0; n < FLOOD_48 / FLOOD_56 + 1; n++) {
    for (let i = 0; i < FLOOD_56; i++) {
      await idOf(`2001:db8:1:${(0x3 + n).toString(16)}${i.toString(16).padStart(2, "0")}::1`);
    }
  }
  assert.equal(await idOf("2001:db8:1:ff00::1"), "ip:2001:db8:1::/48", "the /48 floods");
  assert.equal(await idOf("2001:db8:2::1"), "ip:2001:db8:2:0::/64", "another /48 is apart");
  assert.equal(await idOf("192.0.2.1"), "ip:192.0.2.1");
});

Deno.test("the KV failing: local limits, no waiting, the failure reported, counts kept for later", async () => {
  const inner = new MemoryRateCounters();
  let failing = false;
  const errors: unknown[] = [];
  const counters = {
    sync: (updates: readonly CounterUpdate[]) =>
      failing ? Promise.reject(new Error("database is locked")) : inner.sync(updates),
    heartbeat: () => failing ? Promise.reject(new Error("database is locked")) : Promise.resolve(),
  };
  const limiter = new RateLimiter({ counters, now: () => T0, onSyncError: (e) => errors.push(e) });
  assert.equal((await limiter.consume("key:a", 5, 60)).kind, "allowed");
  failing = true;
  await limiter.sync();
  assert.equal(errors.length, 1);
  assert.match(limiter.syncProblem(5000) ?? "", /failed/);
  const decisions = [];
  for (let i = 0; i < 6; i++) decisions.push(limiter.tryConsume("key:a", 5, 60));
  assert.deepEqual(
    decisions.map((d) => d?.kind),
    ["allowed", "allowed", "allowed", "allowed", "refused", "refused"],
    "decided at once, on this server's counts",
  );
  assert.equal(limiter.tryConsume("key:new", 1, 60)?.kind, "allowed", "a new key too");
  failing = false;
  await limiter.sync();
  assert.equal(limiter.syncProblem(5000), null);
  const other = new RateLimiter({ counters: inner, now: () => T0 });
  assert.equal((await other.consume("key:a", 5, 60)).kind, "refused", "the counts reached the KV");
});

Deno.test("a sync that hangs: requests stop waiting after SYNC_WAIT_MS, readiness fails past the age", async () => {
  const clock = { ms: T0 };
  const hung = Promise.withResolvers<number[]>();
  let hang = false;
  const inner = new MemoryRateCounters();
  const counters = {
    sync: (updates: readonly CounterUpdate[]) => hang ? hung.promise : inner.sync(updates),
    heartbeat: () => hang ? hung.promise.then(() => {}) : Promise.resolve(),
  };
  const limiter = new RateLimiter({ counters, now: () => clock.ms });
  await limiter.sync(); // a heartbeat: the KV took a write
  assert.equal(limiter.syncProblem(5000), null);
  hang = true;
  const started = Date.now();
  // A new key waits for its count; the sync it starts hangs: it is decided locally after the wait.
  const decision = await limiter.consume("key:k", 3, 60);
  const waited = Date.now() - started;
  assert.equal(decision.kind, "allowed");
  assert.ok(waited >= SYNC_WAIT_MS - 50 && waited < SYNC_WAIT_MS + 2000, `waited ${waited} ms`);
  clock.ms += SYNC_WAIT_MS + 1; // the sync has been under way longer than a request may wait
  const quick = Date.now();
  for (let i = 0; i < 4; i++) await limiter.consume("key:other", 2, 60);
  assert.ok(Date.now() - quick < 500, "no more waiting while the sync hangs");
  assert.equal(limiter.syncProblem(5000), null, "within the stated age");
  clock.ms += 5000;
  assert.match(limiter.syncProblem(5000) ?? "", /rate counts not written for 6 s/);
  hang = false;
  hung.resolve([0, 0]);
  await limiter.sync();
  assert.equal(limiter.syncProblem(5000), null, "ready again after a write");
});
