import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  BusyRetry,
  isKvBusy,
  KV_BUSY_BUDGET_MS,
  KvBusyError,
} from "../../../src/data/store/busy.ts";
import { KvKeyStore, recordServerDefaults } from "../../../src/data/store/keys.ts";
import { KvRateCounters } from "../../../src/data/store/rate_counts.ts";

/** What Deno KV throws when SQLite's lock is held by another connection. */
const locked = () => new TypeError("database is locked");

/** A clock that moves only when the retry pauses: no real time passes in these tests. */
function fakeTime(location = "/srv/ipintel.kv") {
  const clock = { ms: 0, pauses: [] as number[] };
  const busy = new BusyRetry({
    location,
    now: () => clock.ms,
    sleep: (ms) => {
      clock.pauses.push(ms);
      clock.ms += ms;
      return Promise.resolve();
    },
    random: () => 0.5,
  });
  return { clock, busy };
}

/** A real in-memory KV whose next `failures` commits and sets throw "database is locked". */
function flakyKv(kv: Deno.Kv, failures: { left: number }): Deno.Kv {
  const fail = () => failures.left > 0 && failures.left-- > 0;
  return new Proxy(kv, {
    get(target, name) {
      if (name === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => fail() ? Promise.reject(locked()) : commit();
          return op;
        };
      }
      if (name === "set" || name === "delete") {
        const write = Reflect.get(target, name) as (...args: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) =>
          fail() ? Promise.reject(locked()) : write.apply(target, args);
      }
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("isKvBusy knows SQLite's busy errors and nothing else", () => {
  assert.ok(isKvBusy(locked()));
  assert.ok(isKvBusy(new Error("SQLITE_BUSY: database is busy")));
  assert.ok(!isKvBusy(new Error("Value too large (max 65536 bytes)")));
  assert.ok(!isKvBusy("database is locked"), "only errors");
});

Deno.test("a key change that meets a busy KV a few times succeeds, after growing pauses", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const failures = { left: 0 };
    const { clock, busy } = fakeTime();
    const store = new KvKeyStore(flakyKv(kv, failures), undefined, busy);
    const { record } = await store.create({ name: "acme" });
    failures.left = 4;
    const updated = await store.setLimits(record.id, { limit: 3, window: 60 });
    assert.deepEqual([updated.limit, updated.window], [3, 60]);
    assert.equal(failures.left, 0, "it met every busy error");
    assert.equal(clock.pauses.length, 4);
    assert.ok(clock.pauses.every((ms, i) => i === 0 || ms > clock.pauses[i - 1]!), "pauses grow");
    assert.deepEqual((await store.list()).map((r) => r.limit), [3], "stored once");
    // A create and the server's start-up record wait the same way.
    failures.left = 2;
    await store.create({ name: "beta" });
    failures.left = 2;
    await recordServerDefaults(flakyKv(kv, failures), { limit: 5, window: 60 }, new Date(), busy);
    assert.equal(failures.left, 0);
  } finally {
    kv.close();
  }
});

Deno.test("a write to a KV that stays busy gives up within the bound, naming the KV and the cause", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { clock, busy } = fakeTime("/srv/ipintel.kv");
    const store = new KvKeyStore(flakyKv(kv, { left: 0 }), undefined, busy);
    const { record } = await store.create({ name: "acme" });
    const stuck = new KvKeyStore(flakyKv(kv, { left: Infinity }), undefined, busy);
    await assert.rejects(
      () => stuck.setLimits(record.id, { limit: 3, window: null }),
      (error: unknown) => {
        assert.ok(error instanceof KvBusyError);
        assert.equal(
          error.message,
          'The Deno KV at "/srv/ipintel.kv" stayed busy for 10.0 s ' +
            "(another process holds its write lock): database is locked",
        );
        assert.ok(error.cause instanceof TypeError);
        return true;
      },
    );
    assert.equal(clock.ms, KV_BUSY_BUDGET_MS, "not a moment past the bound");
    assert.ok(clock.pauses.length > 5 && clock.pauses.length < 40, `${clock.pauses.length} tries`);
    assert.equal((await store.list())[0]!.limit, null, "nothing written");
  } finally {
    kv.close();
  }
});

Deno.test("errors other than busy are not retried", async () => {
  const { clock, busy } = fakeTime();
  let tries = 0;
  await assert.rejects(
    () =>
      busy.run(() => {
        tries++;
        return Promise.reject(new Error("Value too large"));
      }),
    /Value too large/,
  );
  assert.deepEqual([tries, clock.pauses.length], [1, 0]);
});

Deno.test("a rate-count sync retries a busy KV within its own shorter bound, then fails naming the KV", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { clock, busy } = fakeTime();
    const update = {
      caller: "00ff00ff00ff00ff",
      windowSeconds: 60,
      windowIndex: 1,
      add: 2,
      lastUsed: null,
    };
    const failures = { left: 3 };
    assert.deepEqual(await new KvRateCounters(flakyKv(kv, failures), busy).sync([update]), [2]);
    assert.equal(failures.left, 0);
    const start = clock.ms;
    await assert.rejects(
      () => new KvRateCounters(flakyKv(kv, { left: Infinity }), busy).sync([update]),
      /The Deno KV at "\/srv\/ipintel.kv" stayed busy for 1\.0 s .*database is locked/,
    );
    assert.equal(clock.ms - start, 1000);
  } finally {
    kv.close();
  }
});

Deno.test("a key change waits while another connection holds the KV file's write lock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-busy-" });
  const path = `${dir}/keys.kv`;
  const kv = await Deno.openKv(path);
  const db = new DatabaseSync(path);
  try {
    const store = new KvKeyStore(kv);
    const { record } = await store.create({ name: "acme" });
    db.exec("BEGIN EXCLUSIVE"); // as a backup tool or a stuck writer would
    // The lock goes when the write has met it (SQLite's own wait ends in "database is locked"):
    // no timing decides the outcome.
    let metBusy = 0;
    const busy = new BusyRetry({
      location: path,
      sleep: (ms) => {
        if (metBusy++ === 0) db.exec("COMMIT");
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    const waiting = new KvKeyStore(kv, undefined, busy);
    const updated = await waiting.setLimits(record.id, { limit: 7, window: 30 });
    assert.equal(metBusy, 1, "the first try met the lock, the second went through");
    assert.equal(updated.limit, 7);
    assert.equal((await store.list())[0]!.limit, 7);
  } finally {
    if (db.isTransaction) db.exec("ROLLBACK");
    db.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
