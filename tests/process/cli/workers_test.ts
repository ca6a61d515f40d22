/**
 * IPINTEL_WORKERS: several request-serving workers on one port, over one
 * shared copy of the data. Real sockets (the kernel spreads connections over
 * the workers), each request on a connection of its own.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../../_helpers.ts";
import { fetchFresh, type ServeProcess, startServe, waitFor } from "../../_serve_process.ts";
import {
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../../data/update/_feed_server.ts";
import { runCli } from "../../_cli.ts";

/** Requests whose answers must not depend on how many workers serve. */
const PATHS = [
  "/ip/81.2.69.142",
  "/ip/2a02:ec0::1?format=xml",
  "/ip/81.2.69.142?format=csv&lang=de",
  "/ip/81.2.69.142?get=ip,geoLocation.city,timezone.time_zone",
  "/bulk/81.2.69.142,2a02:ec0::1,9.9.9.9",
  "/ip/10.1.2.3",
  "/ip/not-an-ip",
  "/nope",
  "/openapi.json",
];

/** The local time in an answer moves with the clock: compared without it. */
const withoutClock = (text: string) =>
  text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d/g, "<time>");

async function serveFixture(dataDir: string, workers: number): Promise<ServeProcess> {
  return await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: `${dataDir}/workers-${workers}.kv`,
    IPINTEL_AUTH: "off",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: String(workers),
  });
}

Deno.test("two workers answer exactly as one process, and any worker's /metrics counts them all", async () => {
  const dataDir = await writeFixtureDataDir();
  const one = await serveFixture(dataDir, 1);
  const two = await serveFixture(dataDir, 2);
  try {
    assert.match(two.stderr(), /\(2 workers\)/);
    let lookups = 0;
    for (const path of PATHS) {
      const a = await fetchFresh(`http://127.0.0.1:${one.port}${path}`);
      const b = await fetchFresh(`http://127.0.0.1:${two.port}${path}`);
      assert.equal(b.status, a.status, path);
      assert.equal(b.headers.get("content-type"), a.headers.get("content-type"), path);
      assert.equal(withoutClock(await b.text()), withoutClock(await a.text()), path);
      if (path.startsWith("/ip/") && b.status === 200) lookups++;
    }
    // 20 lookups over new connections, then scrapes over new connections: each scrape
    // (whichever worker answers it) counts all of them.
    for (let i = 0; i < 20; i++) await fetchFresh(`http://127.0.0.1:${two.port}/ip/81.2.69.142`);
    for (let i = 0; i < 6; i++) {
      const text = await (await fetchFresh(`http://127.0.0.1:${two.port}/metrics`)).text();
      const counted =
        /ipintel_http_requests_total\{method="GET",route="\/ip\/\{ip\}",status="200"\} (\d+)/
          .exec(text);
      assert.equal(Number(counted?.[1]), 20 + lookups, text);
    }
  } finally {
    await one.kill();
    await two.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a hot reload reaches every worker: after it, no connection gets the old data", async () => {
  const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
  const torV1 = await Deno.readTextFile(`${FIXTURES}tor_bulk_exit_list.txt`);
  const joined = "198.51.100.7";
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  const source = feedSource(feeds, "tor-exits", "tor", "/tor.txt");
  const sourcesFile = `${dataDir}/sources.json`;
  await Deno.writeTextFile(sourcesFile, JSON.stringify({ sources: [source] }));
  feeds.routes.set("/tor.txt", { body: torV1 });
  await update(dataDir, [source]);
  const server = await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_SOURCES: sourcesFile,
    IPINTEL_KV: `${dataDir}/test.kv`,
    IPINTEL_AUTH: "off",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: "2",
  });
  const isTor = async () => {
    const response = await fetchFresh(`http://127.0.0.1:${server.port}/ip/${joined}`);
    return (await response.json()).data.security.isTor as boolean;
  };
  try {
    for (let i = 0; i < 10; i++) assert.equal(await isTor(), false);
    feeds.routes.set("/tor.txt", { body: `${torV1}${joined}\n` });
    const { outcomes } = await update(dataDir, [source]);
    assert.equal(outcomes[0]!.status, "updated");
    await waitFor(() => /new data loaded/.test(server.stderr()), 10_000);
    // Every worker installed the set before the line was written; 40 new connections
    // (spread by the kernel over both workers) all see it.
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push(await isTor());
    assert.deepEqual(answers, Array(40).fill(true));
    const metrics = await (await fetchFresh(`http://127.0.0.1:${server.port}/metrics`)).text();
    assert.match(metrics, /ipintel_data_reloads_total\{result="success"\} 1\n/);
  } finally {
    await server.kill();
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("two workers share one key's limit through the KV: no more than the stated bound over it", async () => {
  const dataDir = await writeFixtureDataDir();
  const kv = `${dataDir}/keys.kv`;
  const created = await runCli(
    ["keys", "create", "--name", "w", "--limit", "20", "--json"],
    { IPINTEL_DATA_DIR: dataDir, IPINTEL_KV: kv, NO_COLOR: "1" },
  );
  assert.equal(created.code, 0, created.stderr);
  const { key } = JSON.parse(created.stdout);
  const server = await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: kv,
    IPINTEL_AUTH: "required",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: "2",
  });
  try {
    const statuses: number[] = [];
    // 60 requests, 4 at a time, each on a connection of its own: both workers charge the key.
    for (let i = 0; i < 15; i++) {
      const batch = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            fetchFresh(`http://127.0.0.1:${server.port}/ip/81.2.69.142`, {
              headers: { "x-api-key": key },
            }),
        ),
      );
      statuses.push(...batch.map((response) => response.status));
    }
    const admitted = statuses.filter((status) => status === 200).length;
    assert.deepEqual(new Set(statuses), new Set([200, 429]));
    // The README's bound: N instances admit at most N × (10% of the limit + 1) over it.
    assert.ok(admitted >= 20 && admitted <= 20 + 2 * (2 + 1), `admitted ${admitted} of 60`);
  } finally {
    await server.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});
