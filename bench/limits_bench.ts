/**
 * The rate limiter at scale, on a real Deno KV file (the limiter and KV a
 * server runs, without HTTP):
 *
 * 1. Sync time and memory with 10,000 and 1,000,000 distinct anonymous
 *    callers (IPv6 /64s): each is charged once while the limiter syncs in the
 *    background every 250 ms, as a server does; then one last sync. Reported:
 *    the syncs' durations and sizes, the rate table's size (fixed) and the
 *    process's RSS growth, and how many callers the cap evicted.
 * 2. The latency of a keyed charge (what a keyed request waits for: the
 *    decision, a sync when its allowance runs out, and the event loop the
 *    syncs share) while 100,000 anonymous callers are being charged, against
 *    the same load from one anonymous caller (same rate, same work per
 *    request, only the number of distinct callers differs). p50 / p99 / max.
 *
 * 3. The same over HTTP: a real server (default workers, a KV file, auth
 *    optional, keyless callers told apart by X-Forwarded-For from a trusted
 *    proxy, each from its own /48 so none is grouped), 16 keyless clients
 *    cycling through 100,000 callers (after one full cycle: all of them
 *    active) or one caller, and one keyed client in a loop: its p50 / p99.
 *
 * Run: `deno task bench:limits`. BENCH_KEYED_SECONDS (10) per keyed run,
 * BENCH_HTTP_SECONDS (15) of keyed requests per HTTP run (after the warm-up cycle).
 * The machine is shared: read the two keyed runs as a pair.
 *
 * @module
 */

import { RateLimiter } from "../src/service/keys_limits/rate_limiter.ts";
import {
  DEFAULT_CAPACITY,
  RateTable,
  rateTableBuffer,
} from "../src/service/keys_limits/rate_table.ts";
import { KvKeyStore } from "../src/data/store/keys.ts";
import { type CounterUpdate, KvRateCounters } from "../src/data/store/rate_counts.ts";
import { envInt, median, startServer } from "./_serve.ts";

const KEYED_SECONDS = envInt("BENCH_KEYED_SECONDS", 10);
const HTTP_SECONDS = envInt("BENCH_HTTP_SECONDS", 15);
const HTTP_CALLERS = envInt("BENCH_HTTP_CALLERS", 100_000);
/** Which parts to run (BENCH_PARTS=1,2,3). */
const PARTS = (Deno.env.get("BENCH_PARTS") ?? "1,2,3").split(",");
const SYNC_MS = 250;

/** KV counters that time every sync. */
class TimedCounters extends KvRateCounters {
  readonly syncs: { ms: number; updates: number }[] = [];
  override async sync(updates: readonly CounterUpdate[]): Promise<number[]> {
    const start = performance.now();
    const totals = await super.sync(updates);
    this.syncs.push({ ms: performance.now() - start, updates: updates.length });
    return totals;
  }
}

function rssMb(): number {
  return Deno.memoryUsage().rss / 2 ** 20;
}

const anonymous = (i: number) =>
  `ip:2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function withKv<T>(fn: (counters: TimedCounters) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-limits-bench-" });
  const kv = await Deno.openKv(`${dir}/rate.kv`);
  try {
    return await fn(new TimedCounters(kv));
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Part 1: N anonymous callers charged once each, syncing in the background. */
async function manyCallers(count: number) {
  return await withKv(async (counters) => {
    const rssBefore = rssMb();
    const limiter = new RateLimiter({ counters, onSyncError: (e) => console.error(e) });
    limiter.start(SYNC_MS);
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      limiter.tryConsume(anonymous(i), 60, 60, 1, "anonymous");
      // Yield now and then, as a server between requests: the background syncs run.
      if (i % 2000 === 1999) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    const chargeSeconds = (performance.now() - start) / 1000;
    const lastStart = performance.now();
    await limiter.close(); // the last sync: what is still pending
    const lastMs = performance.now() - lastStart;
    const rssAfter = rssMb();
    const syncs = counters.syncs;
    const times = syncs.map((s) => s.ms).sort((a, b) => a - b);
    return {
      count,
      chargeSeconds,
      syncs: syncs.length,
      medianMs: median(times),
      maxMs: times.at(-1) ?? 0,
      maxUpdates: Math.max(0, ...syncs.map((s) => s.updates)),
      lastMs,
      tableMb: limiter.table.bytes / 2 ** 20,
      rssGrowthMb: rssAfter - rssBefore,
      evicted: limiter.table.regions.anonymous.evictions,
    };
  });
}

/** Part 2: keyed charges every ms while anonymous callers (`distinct` of them) are charged. */
async function keyedLatency(distinct: number) {
  return await withKv(async (counters) => {
    const limiter = new RateLimiter({
      counters,
      table: new RateTable(rateTableBuffer()),
      onSyncError: (e) => console.error(e),
    });
    limiter.start(SYNC_MS);
    const until = performance.now() + KEYED_SECONDS * 1000;
    let anonCharges = 0;
    // The anonymous load: slices of 100 charges, over `distinct` callers.
    const load = (async () => {
      let i = 0;
      while (performance.now() < until) {
        for (let n = 0; n < 100; n++) {
          limiter.tryConsume(anonymous(i++ % distinct), 1_000_000, 60, 1, "anonymous");
        }
        anonCharges += 100;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    })();
    // The keyed probe: a limit it spends (1000 per 60 s would refuse): 10,000,000 per 60 s,
    // with a charge of 1 every ms; each waits its turn on the event loop like a request.
    const latencies: number[] = [];
    const probe = (async () => {
      while (performance.now() < until) {
        const arrived = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 1));
        const due = arrived + 1;
        const decision = limiter.tryConsume("key:bench", 10_000_000, 60) ??
          await limiter.consume("key:bench", 10_000_000, 60);
        if (decision.kind !== "allowed") throw new Error("the keyed probe was refused");
        latencies.push(performance.now() - due);
      }
    })();
    await Promise.all([load, probe]);
    await limiter.close();
    latencies.sort((a, b) => a - b);
    return {
      distinct,
      anonPerSecond: anonCharges / KEYED_SECONDS,
      probes: latencies.length,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      max: latencies.at(-1)!,
      syncs: counters.syncs.length,
    };
  });
}

console.log(
  `Rate table: ${DEFAULT_CAPACITY.key} key slots, ${DEFAULT_CAPACITY.anonymous} anonymous slots (${
    (rateTableBuffer().byteLength / 2 ** 20).toFixed(1)
  } MB, fixed); sync every ${SYNC_MS} ms; KV: a local file. The machine is shared.`,
);
if (PARTS.includes("1")) {
  console.log(
    "\n| anonymous callers | charging, s | syncs | sync median / max, ms | largest sync, counters | last sync, ms | table, MB | RSS growth, MB | evicted |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const count of [10_000, 1_000_000]) {
    const r = await manyCallers(count);
    console.log(
      `| ${r.count.toLocaleString("en")} | ${r.chargeSeconds.toFixed(1)} | ${r.syncs} | ${
        r.medianMs.toFixed(0)
      } / ${r.maxMs.toFixed(0)} | ${r.maxUpdates} | ${r.lastMs.toFixed(0)} | ${
        r.tableMb.toFixed(1)
      } | ${r.rssGrowthMb.toFixed(0)} | ${r.evicted.toLocaleString("en")} |`,
    );
  }
}
if (PARTS.includes("2")) {
  console.log(`\nKeyed charge latency, ${KEYED_SECONDS} s per run, one charge per ms:`);
  console.log(
    "| anonymous callers in the load | anonymous charges/s | keyed p50 / p99 / max, ms | syncs |",
  );
  console.log("| ---: | ---: | ---: | ---: |");
  for (const distinct of [1, 100_000]) {
    const r = await keyedLatency(distinct);
    console.log(
      `| ${r.distinct.toLocaleString("en")} | ${
        Math.round(r.anonPerSecond).toLocaleString("en")
      } | ${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} / ${r.max.toFixed(1)} | ${r.syncs} |`,
    );
  }
}

/** Part 3: a keyed client's latency over HTTP while 16 keyless clients cycle through `distinct` callers. */
async function keyedOverHttp(distinct: number) {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-limits-http-" });
  const kvPath = `${dir}/rate.kv`;
  const kv = await Deno.openKv(kvPath);
  const { key } = await new KvKeyStore(kv).create({ name: "bench", limit: 1_000_000_000 });
  kv.close();
  const server = await startServer(dir, [
    "--kv",
    kvPath,
    "--auth",
    "optional",
    "--anon-rate-limit",
    "1000000000",
    "--trusted-proxies",
    "127.0.0.1/32",
    "--log",
    "off",
  ]);
  try {
    const url = `http://127.0.0.1:${server.port}/ip/8.8.8.8`;
    let sent = 0;
    let stop = false;
    // Each keyless caller from its own /48: 2001:h:l::/48.
    const address = (i: number) =>
      `2001:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`;
    const clients = Array.from({ length: 16 }, async () => {
      while (!stop) {
        const i = sent++ % distinct;
        const response = await fetch(url, { headers: { "x-forwarded-for": address(i) } });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`keyless: ${response.status}`);
      }
    });
    // Warm-up: one full cycle of the 100,000 callers' worth of requests (the same for one caller).
    const warmStart = performance.now();
    while (sent < HTTP_CALLERS) await new Promise((resolve) => setTimeout(resolve, 100));
    const warmSeconds = (performance.now() - warmStart) / 1000;
    const latencies: number[] = [];
    const sentBefore = sent;
    const until = performance.now() + HTTP_SECONDS * 1000;
    while (performance.now() < until) {
      const start = performance.now();
      const response = await fetch(url, { headers: { "x-api-key": key } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`keyed: ${response.status}`);
      latencies.push(performance.now() - start);
    }
    const keylessPerSecond = (sent - sentBefore) / HTTP_SECONDS;
    stop = true;
    await Promise.all(clients);
    latencies.sort((a, b) => a - b);
    return {
      distinct,
      warmSeconds,
      keylessPerSecond,
      probes: latencies.length,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

if (PARTS.includes("3")) {
  console.log(
    `\nOver HTTP (default workers, wrk not used: 16 keyless fetch clients + 1 keyed client, ${HTTP_SECONDS} s after a warm-up of ${
      HTTP_CALLERS.toLocaleString("en")
    } keyless requests):`,
  );
  console.log(
    "| keyless callers | warm-up, s | keyless requests/s | keyed requests | keyed p50 / p99, ms |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: |");
  for (const distinct of [1, HTTP_CALLERS]) {
    const r = await keyedOverHttp(distinct);
    console.log(
      `| ${r.distinct.toLocaleString("en")} | ${r.warmSeconds.toFixed(0)} | ${
        Math.round(r.keylessPerSecond)
      } | ${r.probes} | ${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} |`,
    );
  }
}
