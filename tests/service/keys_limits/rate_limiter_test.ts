import assert from "node:assert/strict";
import {
  counterId,
  RateLimiter,
  waitSeconds,
} from "../../../src/service/keys_limits/rate_limiter.ts";
import { KvRateCounters, MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { seededRandom } from "../../_random.ts";

/** A limiter on a clock the test moves; starts at a window boundary (t = 1000 windows of 60 s). */
function limiterAt(counters = new MemoryRateCounters()) {
  const clock = { ms: 60_000 * 1000 };
  const limiter = new RateLimiter({
    counters,
    now: () => clock.ms,
    onSyncError: (e) => {
      throw e;
    },
  });
  return { limiter, clock, advance: (seconds: number) => (clock.ms += seconds * 1000) };
}

Deno.test("the limiter admits exactly the limit in one window, then refuses with when to retry", async () => {
  const { limiter } = limiterAt();
  const decisions = [];
  for (let i = 0; i < 11; i++) decisions.push(await limiter.consume("k", 10, 60));
  assert.deepEqual(decisions.map((d) => d.kind === "allowed"), [...Array(10).fill(true), false]);
  assert.deepEqual(decisions.map((d) => d.remaining), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]);
  // Ten used at the start of the window: a sliding window frees them one window after they were
  // spent, 60 s (the counter alone would wait for a tenth of the next window too: 66 s).
  assert.equal(decisions[10]!.retryAfterSeconds, 60);
  assert.equal(decisions[9]!.resetSeconds, 60, "a unit frees up at the same moment");
});

Deno.test("the sliding window weighs the previous window by the share still inside it", async () => {
  const { limiter, advance } = limiterAt();
  advance(59); // spent late in the window: still inside the sliding window well into the next
  for (let i = 0; i < 10; i++) assert.ok((await limiter.consume("k", 10, 60)).kind === "allowed");
  advance(1); // new window starts: previous = 10 at full weight
  assert.equal((await limiter.consume("k", 10, 60)).kind === "allowed", false);
  advance(5.9); // weight 54.1/60 → 9.02 used: still no room
  assert.equal((await limiter.consume("k", 10, 60)).kind === "allowed", false);
  advance(0.2); // 6.1 s in: weight 53.9/60 → 8.98 used: one fits
  const decision = await limiter.consume("k", 10, 60);
  assert.equal(decision.kind === "allowed", true);
  assert.equal(decision.remaining, 0);
  advance(54); // the end of the window: previous has no weight left, current holds 1
  assert.equal((await limiter.consume("k", 10, 60)).remaining, 8);
  advance(120); // two windows on: nothing counts
  assert.equal((await limiter.consume("k", 10, 60)).remaining, 9);
});

Deno.test("a bulk request is refused whole when it does not fit, and never when it cannot", async () => {
  const { limiter } = limiterAt();
  assert.equal((await limiter.consume("k", 10, 60, 7)).remaining, 3);
  const refused = await limiter.consume("k", 10, 60, 4);
  assert.equal(refused.kind === "allowed", false);
  assert.equal(refused.remaining, 3, "nothing of a refused request is counted");
  assert.equal((await limiter.consume("k", 10, 60, 3)).kind === "allowed", true);
  const never = await limiter.consume("other", 10, 60, 11);
  assert.equal(never.kind === "allowed", false);
  assert.equal(never.retryAfterSeconds, Infinity);
});

Deno.test("callers and windows are counted apart", async () => {
  const { limiter } = limiterAt();
  for (let i = 0; i < 3; i++) await limiter.consume("a", 3, 60);
  assert.equal((await limiter.consume("a", 3, 60)).kind === "allowed", false);
  assert.equal((await limiter.consume("b", 3, 60)).kind === "allowed", true);
  assert.equal(
    (await limiter.consume("a", 3, 10)).kind === "allowed",
    true,
    "another window is another budget",
  );
});

Deno.test("tryConsume() decides from memory within the allowance and asks for a sync beyond it", async () => {
  const { limiter } = limiterAt();
  assert.equal(limiter.tryConsume("k", 100, 60), null, "an unknown caller needs the shared count");
  await limiter.consume("k", 100, 60); // syncs: 99 remain, allowance 9
  let local = 0;
  while (limiter.tryConsume("k", 100, 60)) local++;
  assert.equal(local, 9, "a tenth of what remained is admitted without a sync");
  await limiter.sync();
  assert.ok(limiter.tryConsume("k", 100, 60)?.kind === "allowed", "a sync renews the allowance");
});

Deno.test("waitSeconds() solves the weighted sum for the time a request fits", () => {
  // previous 10 at 0 s of a 60 s window: 10×(1−t/60) ≤ 9 → t = 6
  assert.equal(waitSeconds(10, 0, 0, 60, 9), 6);
  // current 10, nothing before: the rest of the window, then 10×(1−t/60) ≤ 5 → 30 s into the next
  assert.equal(waitSeconds(0, 10, 20, 60, 5), 40 + 30);
  assert.equal(waitSeconds(4, 1, 30, 60, 5), 0);
  assert.equal(waitSeconds(0, 0, 0, 60, -1), Infinity);
});

Deno.test("no unit counts for longer than one window: Retry-After and RateLimit-Reset stay within it", async () => {
  const random = seededRandom(29);
  for (const [limit, window] of [[3, 60], [10, 60], [1, 1], [5, 3600]] as const) {
    for (let run = 0; run < 40; run++) {
      const { limiter, advance } = limiterAt();
      advance(random() * window); // anywhere in a fixed window
      let lastAdmitted = -Infinity;
      let elapsed = 0;
      for (let i = 0; i < 60; i++) {
        // Bursts, pauses and everything between, up to two windows apart.
        const gap = random() < 0.5 ? random() * window / 10 : random() * window * 2;
        advance(gap);
        elapsed += gap;
        const decision = await limiter.consume("k", limit, window);
        const at = `limit ${limit}/${window} s, run ${run}, request ${i}`;
        assert.ok(
          decision.resetSeconds <= window,
          `RateLimit-Reset ${decision.resetSeconds}, ${at}`,
        );
        if (decision.kind === "allowed") {
          lastAdmitted = elapsed;
          continue;
        }
        assert.ok(
          elapsed - lastAdmitted < window,
          `refused a whole window after the last unit was spent, ${at}`,
        );
        assert.ok(
          decision.retryAfterSeconds <= window,
          `Retry-After ${decision.retryAfterSeconds}, ${at}`,
        );
        // Retry-After is honest: a request sent then is admitted.
        advance(decision.retryAfterSeconds);
        elapsed += decision.retryAfterSeconds;
        const retried = await limiter.consume("k", limit, window);
        assert.equal(
          retried.kind,
          "allowed",
          `the retry after ${decision.retryAfterSeconds} s, ${at}`,
        );
        lastAdmitted = elapsed;
      }
    }
  }
});

/** Two limiters on one KV file, as two server instances would be. */
async function twoInstances() {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-rate-" });
  // The second handle opens a file the first has made (two handles creating one new
  // SQLite file at once can meet "database is locked", which is not what this tests).
  const first = await Deno.openKv(`${dir}/rate.kv`);
  await first.set(["test", "created"], true);
  const kvs = [first, await Deno.openKv(`${dir}/rate.kv`)];
  const clock = { ms: 60_000 * 2000 };
  const limiters = kvs.map((kv) =>
    new RateLimiter({ counters: new KvRateCounters(kv), now: () => clock.ms })
  );
  return {
    limiters,
    clock,
    done: async () => {
      for (const kv of kvs) kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("two instances on one KV share one budget", async () => {
  const { limiters: [a, b], done } = await twoInstances();
  try {
    for (let i = 0; i < 20; i++) assert.ok((await a!.consume("k", 20, 60)).kind === "allowed");
    await a!.sync();
    const refused = await b!.consume("k", 20, 60);
    assert.equal(
      refused.kind === "allowed",
      false,
      "the second instance sees what the first admitted",
    );
    assert.equal(refused.remaining, 0);
  } finally {
    await done();
  }
});

Deno.test("two instances admit at most the stated bound over the limit, syncing as they go", async () => {
  const { limiters, done } = await twoInstances();
  try {
    const limit = 200;
    let admitted = 0;
    // Interleaved bursts through the fast local path, with syncs only when a limiter asks for one.
    for (let round = 0; round < 400; round++) {
      const limiter = limiters[round % 2]!;
      const fast = limiter.tryConsume("k", limit, 60);
      const decision = fast ?? await limiter.consume("k", limit, 60);
      if (decision.kind === "allowed") admitted++;
    }
    const bound = 2 * (0.1 * limit + 1); // N × (10% of the limit + 1)
    assert.ok(admitted >= limit, `no refusal below the limit (${admitted} admitted)`);
    assert.ok(admitted <= limit + bound, `${admitted} admitted, bound ${limit + bound}`);
    await Promise.all(limiters.map((l) => l.close()));
    const [c] = limiters;
    assert.equal((await c!.consume("k", limit, 60)).kind === "allowed", false);
  } finally {
    await done();
  }
});

Deno.test("KV counters add up exactly under concurrent writers", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const counters = new KvRateCounters(kv);
    const update = { caller: "k", windowSeconds: 60, windowIndex: 5, add: 1, lastUsed: null };
    const totals = await Promise.all(Array.from({ length: 25 }, () => counters.sync([update])));
    assert.deepEqual(
      totals.flat().sort((x, y) => x - y),
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    assert.deepEqual(await counters.sync([{ ...update, add: 0 }]), [25]);
  } finally {
    kv.close();
  }
});

Deno.test("a background sync writes what is pending and reads only callers in use", async () => {
  const inner = new MemoryRateCounters();
  const seen: string[][] = [];
  const names = new Map(["busy", "quiet"].map((name) => [counterId(name), name]));
  const counters = {
    sync(updates: Parameters<MemoryRateCounters["sync"]>[0]) {
      seen.push([...new Set(updates.map((u) => names.get(u.caller)!))]);
      return inner.sync(updates);
    },
    heartbeat: () => Promise.resolve(),
  };
  const { limiter, advance } = limiterAt(counters as MemoryRateCounters);
  await limiter.consume("busy", 1000, 60);
  await limiter.consume("quiet", 1000, 60);
  await limiter.sync(); // both admissions shared
  seen.length = 0;
  limiter.tryConsume("busy", 1000, 60); // pending, not yet shared
  await limiter.sync();
  assert.deepEqual(seen, [["busy"]], "only the caller with a pending count");
  advance(0.5);
  await limiter.sync();
  assert.deepEqual(seen.slice(1), [], "nothing pending, nothing old: no KV traffic");
  advance(1);
  limiter.tryConsume("busy", 1000, 60);
  await limiter.sync();
  assert.deepEqual(seen.slice(1), [["busy"]], "the idle caller is not read again");
});

Deno.test("a concurrent burst on two instances stays within the bound", async () => {
  const { limiters, done } = await twoInstances();
  try {
    const limit = 50;
    // 100 requests at once on each instance: they wait for syncs together.
    const decisions = await Promise.all(
      limiters.flatMap((limiter) =>
        Array.from({ length: 100 }, () => limiter.consume("burst", limit, 60))
      ),
    );
    const admitted = decisions.filter((d) => d.kind === "allowed").length;
    assert.ok(admitted >= limit, `${admitted} admitted: none refused below the limit`);
    assert.ok(admitted <= limit + 2 * (0.1 * limit + 1), `${admitted} admitted`);
  } finally {
    await done();
  }
});
