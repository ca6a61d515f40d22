/**
 * Fault: the KV file is held locked by another process (a write transaction
 * left open), as a backup tool or a stuck process would. The server keeps
 * answering, limits stay exact on this server (fail open with local limits),
 * `/ready` says not ready within the stated age (RATE_SYNC_MAX_AGE_MS) and
 * ready again once the lock is gone, and the failures are logged once per
 * interval with a count, not once per attempt.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { RATE_SYNC_MAX_AGE_MS } from "../../src/process/server/keys_limits.ts";
import { KvKeyStore } from "../../src/data/store/keys.ts";
import { writeFixtureDataDir } from "../_helpers.ts";
import { fetchFresh, startServe } from "../_serve_process.ts";

/** Polls `/ready` until it answers `status`; the seconds it took, or throws after `timeoutMs`. */
async function readyBecomes(port: number, status: number, timeoutMs: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    const response = await fetchFresh(`http://127.0.0.1:${port}/ready`);
    if (response.status === status) return (Date.now() - start) / 1000;
    if (Date.now() - start > timeoutMs) {
      throw new Error(
        `/ready still ${response.status} after ${timeoutMs} ms: ${await response.text()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

Deno.test("KV locked: /ready not ready within the stated age, limits still exact, ready again after", async () => {
  const dataDir = await writeFixtureDataDir();
  const kvPath = `${dataDir}/locked.kv`;
  const kv = await Deno.openKv(kvPath);
  const store = new KvKeyStore(kv);
  const key = (await store.create({ name: "locked", limit: 4, window: 60 })).key;
  const fresh = (await store.create({ name: "fresh", limit: 2, window: 60 })).key;
  kv.close();
  const server = await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: kvPath,
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: "2",
  });
  const lookup = (secret: string) =>
    fetchFresh(`http://127.0.0.1:${server.port}/ip/81.2.69.142`, {
      headers: { "x-api-key": secret },
    });
  let db: DatabaseSync | null = null;
  try {
    await readyBecomes(server.port, 200, 10_000);
    assert.equal((await lookup(key)).status, 200);

    db = new DatabaseSync(kvPath);
    db.exec("BEGIN EXCLUSIVE"); // held by this process: the server cannot write
    const lockedAt = Date.now();
    const notReady = await readyBecomes(server.port, 503, RATE_SYNC_MAX_AGE_MS + 6000);
    const body = await (await fetchFresh(`http://127.0.0.1:${server.port}/ready`)).text();
    assert.match(body, /Deno KV: .*rate counts/, body);
    assert.ok(
      (Date.now() - lockedAt) / 1000 <= RATE_SYNC_MAX_AGE_MS / 1000 + 5,
      `not ready after ${notReady} s`,
    );

    // Meanwhile the server answers, within its own limits: 3 more for the first key (4 in
    // all), 2 for a key it never counted before (decided on this server's counts alone).
    const started = Date.now();
    const statuses = await Promise.all(Array.from({ length: 8 }, () => lookup(key)));
    assert.equal(statuses.filter((r) => r.status === 200).length, 3);
    const freshStatuses = await Promise.all(Array.from({ length: 6 }, () => lookup(fresh)));
    assert.equal(freshStatuses.filter((r) => r.status === 200).length, 2);
    assert.ok(Date.now() - started < 5000, "requests are not held by the locked KV");

    // Hold it a little longer: repeated failures are counted, not logged one by one.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    db.exec("COMMIT");
    db.close();
    db = null;
    const back = await readyBecomes(server.port, 200, 15_000);
    console.log(`not ready ${notReady} s after the lock; ready ${back} s after its release`);
    assert.ok(back < 15, `ready again after ${back} s`);
    const failures = server.stderr().split("\n").filter((l) =>
      /rate counts to the KV failed/.test(l)
    );
    assert.ok(failures.length >= 1 && failures.length <= 6, failures.join("\n"));
    assert.doesNotMatch(server.stderr(), /\n\s+at /, "no stack traces");
    assert.match(server.stderr(), /writing rate counts to the KV works again/);

    // The counts admitted while locked reach the KV: the first key stays spent.
    const after = await Promise.all(Array.from({ length: 3 }, () => lookup(key)));
    assert.deepEqual(after.map((r) => r.status), [429, 429, 429]);
  } finally {
    if (db) {
      db.exec("ROLLBACK");
      db.close();
    }
    await server.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
});
