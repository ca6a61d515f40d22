/**
 * A server compiling a big list in its background update keeps answering:
 * the update (download, parse, compile) runs in a worker of its own, so the
 * isolate that serves is never blocked by it. One serving isolate
 * (IPINTEL_WORKERS=1), over a real socket; `/health` and a lookup are asked
 * one after another, each after the previous answer, all through the compile.
 */

import assert from "node:assert/strict";
import { fetchFresh, startServe, waitFor } from "../../_serve_process.ts";
import { randomIpv4List } from "./_big_list.ts";
import { feedSource, startFeedServer, writeBaseDataDir } from "./_feed_server.ts";

/** About 400,000 addresses: seconds of parsing and compiling, even on a fast machine. */
const LIST_BYTES = 6_000_000;

Deno.test("the server answers /health and lookups while its update compiles a big list", async () => {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    feeds.routes.set("/asn.mmdb", { body: await Deno.readFile(`${dataDir}/asn.mmdb`) });
    feeds.routes.set("/big.txt", { body: randomIpv4List(LIST_BYTES) });
    const sources = [
      { ...feedSource(feeds, "test-asn", "asn", "/asn.mmdb"), format: "mmdb" },
      feedSource(feeds, "big", "threat", "/big.txt"),
    ];
    await Deno.writeTextFile(`${dataDir}/sources.json`, JSON.stringify({ sources }));
    const server = await startServe({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_SOURCES: `${dataDir}/sources.json`,
      IPINTEL_UPDATE_INTERVAL: "1d",
      IPINTEL_AUTH: "off",
      IPINTEL_KV: ":memory:",
      IPINTEL_WORKERS: "1",
    });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      // From the list's download to the update's last line: parsed, compiled and installed.
      const compiling = () => feeds.requests.some((r) => r.path === "/big.txt");
      const finished = () => /update: \d+ updated, \d+ unchanged, \d+ failed/.test(server.stderr());
      let during = 0;
      let slowest = 0;
      let slowestOverall = 0;
      let stop = false;
      let failure: string | null = null;
      const poll = (async () => {
        for (let i = 0; !stop; i++) {
          const started = performance.now();
          const path = i % 2 ? "/health" : "/ip/8.8.8.8";
          const response = await fetchFresh(`${base}${path}`).catch((error) => error as Error);
          if (response instanceof Error || response.status !== 200) {
            failure ??= `${path}: ${
              response instanceof Error ? response.message : response.status
            }`;
            continue;
          }
          const took = performance.now() - started;
          if (compiling() && !finished()) {
            during++;
            slowest = Math.max(slowest, took);
          }
          if (compiling()) slowestOverall = Math.max(slowestOverall, took);
        }
      })();
      await waitFor(() => finished() || failure !== null, 120_000);
      assert.equal(failure, null, server.stderr());
      assert.match(server.stderr(), /update: 2 updated, 0 unchanged, 0 failed/, server.stderr());
      // Compiled in the serving isolate, it answers only between the steps: 59 seen (thousands in a worker).
      assert.ok(during >= 200, `only ${during} answers during the compile:\n${server.stderr()}`);
      console.log(`${during} answers during the compile, the slowest in ${slowest.toFixed(0)} ms`);
      // The new tree is served once the hot reload has read it.
      const listed = `${base}/ip/${firstAddress()}?get=security`;
      let threat: string | null = null;
      for (const deadline = Date.now() + 30_000; threat !== "high" && Date.now() < deadline;) {
        threat = (await (await fetchFresh(listed)).json()).data.security.isThreat;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(threat, "high", server.stderr());
      stop = true;
      await poll;
      console.log(
        `the slowest answer from the compile to the new tree served: ${
          slowestOverall.toFixed(0)
        } ms`,
      );
    } finally {
      await server.stop();
    }
  } finally {
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

function firstAddress(): string {
  return randomIpv4List(100).split("\n")[0]!;
}
