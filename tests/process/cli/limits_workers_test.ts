/**
 * Rate limits of a real server with workers, over real sockets (each request
 * on a connection of its own, so the kernel spreads them over the workers):
 * one server admits exactly the limit, its RateLimit headers agree whichever
 * worker answers, and two servers on one KV keep the stated bound.
 */

import assert from "node:assert/strict";
import { KvKeyStore } from "../../../src/data/store/keys.ts";
import { writeFixtureDataDir } from "../../_helpers.ts";
import { fetchFresh, type ServeProcess, startServe } from "../../_serve_process.ts";

const IP = "81.2.69.142";

/** A data dir and a KV file with one key per limit (60 s windows); returns the secrets by limit. */
async function setUp(limits: number[]) {
  const dataDir = await writeFixtureDataDir();
  const kvPath = `${dataDir}/limits.kv`;
  const kv = await Deno.openKv(kvPath);
  const keys = new Map<number, string>();
  try {
    const store = new KvKeyStore(kv);
    for (const limit of limits) {
      keys.set(limit, (await store.create({ name: `limit ${limit}`, limit, window: 60 })).key);
    }
  } finally {
    kv.close();
  }
  return { dataDir, kvPath, keys };
}

function serve(dataDir: string, kvPath: string, workers: number): Promise<ServeProcess> {
  return startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: kvPath,
    IPINTEL_AUTH: "optional",
    IPINTEL_ANON_RATE_LIMIT: "2",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: String(workers),
  });
}

interface Answer {
  status: number;
  units: number;
  limit: string | null;
  remaining: string | null;
  retryAfter: string | null;
}

async function send(port: number, path: string, key: string | null, units = 1): Promise<Answer> {
  const headers: Record<string, string> = key ? { "x-api-key": key } : {};
  const response = await fetchFresh(`http://127.0.0.1:${port}${path}`, { headers });
  return {
    status: response.status,
    units,
    limit: response.headers.get("ratelimit-limit"),
    remaining: response.headers.get("ratelimit-remaining"),
    retryAfter: response.headers.get("retry-after"),
  };
}

/** `count` requests at once: single lookups, or bulks of `size` addresses. */
function burst(port: number, key: string | null, count: number, size = 1): Promise<Answer[]> {
  const path = size === 1 ? `/ip/${IP}` : `/bulk/${Array(size).fill(IP).join(",")}`;
  return Promise.all(Array.from({ length: count }, () => send(port, path, key, size)));
}

const admittedUnits = (answers: Answer[]) =>
  answers.filter((a) => a.status === 200).reduce((n, a) => n + a.units, 0);

/** Every answer is 200 or 429, and the headers of each agree with the budget. */
function checkHeaders(answers: Answer[], limit: number) {
  for (const a of answers) {
    assert.ok(a.status === 200 || a.status === 429, `status ${a.status}`);
    assert.equal(a.limit, String(limit));
    if (a.status === 429) {
      assert.ok(Number(a.remaining) < a.units, `${a.remaining} left, ${a.units} asked: refused`);
      const retry = Number(a.retryAfter);
      assert.ok(retry >= 1 && retry <= 2 * 60, `Retry-After ${a.retryAfter} for a 60 s window`);
    }
  }
  // Refusals of one cost agree whichever worker answers (a larger cost waits longer for its units).
  for (const units of new Set(answers.map((a) => a.units))) {
    const retries = answers.filter((a) => a.status === 429 && a.units === units)
      .map((a) => Number(a.retryAfter));
    if (retries.length) {
      assert.ok(
        Math.max(...retries) - Math.min(...retries) <= 2,
        `Retry-After ${retries} for ${units} unit(s)`,
      );
    }
  }
}

for (const workers of [2, 4]) {
  Deno.test(`${workers} workers admit exactly the limit: 1, 5 and 100, singles and bulks, keyed and keyless`, async () => {
    const { dataDir, kvPath, keys } = await setUp([1, 5, 100, 101]);
    const server = await serve(dataDir, kvPath, workers);
    try {
      for (const limit of [1, 5]) {
        const answers = await burst(server.port, keys.get(limit)!, 50);
        assert.equal(admittedUnits(answers), limit, `limit ${limit}, ${workers} workers`);
        checkHeaders(answers, limit);
        // Each admission took one unit of the one budget: the remainders count down once each.
        const remaining = answers.filter((a) => a.status === 200).map((a) => Number(a.remaining));
        assert.deepEqual(remaining.sort((x, y) => y - x), [...Array(limit).keys()].reverse());
      }
      // Limit 100: 50 singles and 20 bulks of 5 at once: exactly 100 units.
      const key100 = keys.get(100)!;
      const mixed =
        (await Promise.all([burst(server.port, key100, 50), burst(server.port, key100, 20, 5)]))
          .flat();
      assert.equal(admittedUnits(mixed), 100, `limit 100 mixed, ${workers} workers`);
      checkHeaders(mixed, 100);
      // 20 bulks of 10 at once on a limit of 101: ten fit, whole.
      const bulks = await burst(server.port, keys.get(101)!, 20, 10);
      assert.equal(admittedUnits(bulks), 100);
      checkHeaders(bulks, 101);
      // Keyless callers from one address, limited to 2.
      const keyless = await burst(server.port, null, 50);
      assert.equal(admittedUnits(keyless), 2, `keyless, ${workers} workers`);
      checkHeaders(keyless, 2);
    } finally {
      await server.stop();
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}

Deno.test("one after another, on any worker, the headers count down one budget", async () => {
  const { dataDir, kvPath, keys } = await setUp([3]);
  const server = await serve(dataDir, kvPath, 4);
  try {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await send(server.port, `/ip/${IP}`, keys.get(3)!));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 429, 429, 429]);
    assert.deepEqual(answers.map((a) => a.remaining), ["2", "1", "0", "0", "0", "0"]);
    const retries = answers.slice(3).map((a) => Number(a.retryAfter));
    // Three used at once in a 60 s window: a unit frees up when the window has slid past them.
    for (const retry of retries) assert.ok(retry > 0 && retry <= 120, `Retry-After ${retry}`);
    assert.ok(Math.max(...retries) - Math.min(...retries) <= 1, `Retry-After ${retries}`);
  } finally {
    await server.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("two servers of two workers on one KV stay within N × (10% of the limit + 1)", async () => {
  const limit = 100;
  const { dataDir, kvPath, keys } = await setUp([limit]);
  const servers = [await serve(dataDir, kvPath, 2), await serve(dataDir, kvPath, 2)];
  try {
    const key = keys.get(limit)!;
    // 4 rounds of 40 requests at once, spread over both servers.
    const answers: Answer[] = [];
    for (let round = 0; round < 4; round++) {
      answers.push(...(await Promise.all(servers.map((s) => burst(s.port, key, 20)))).flat());
    }
    const admitted = admittedUnits(answers);
    const bound = limit + 2 * (0.1 * limit + 1);
    assert.ok(admitted >= limit, `${admitted} admitted: none refused below the limit`);
    assert.ok(admitted <= bound, `${admitted} admitted, bound ${bound}`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("with a KV in memory (one per isolate), the workers still share one exact count", async () => {
  const dataDir = await writeFixtureDataDir();
  const server = await serve(dataDir, ":memory:", 4);
  try {
    // Spread over several syncs (every 250 ms): each isolate's own KV must not undo the count.
    const answers: Answer[] = [];
    for (let i = 0; i < 12; i++) {
      const pair = await burst(server.port, null, 2);
      checkHeaders(pair, 2);
      answers.push(...pair);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    assert.equal(admittedUnits(answers), 2);
  } finally {
    await server.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
});
