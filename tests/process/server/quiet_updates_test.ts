/**
 * A closed network is quiet: a scheduled update whose sources fail says one
 * line (its counts, each failed host once, when it tries again), no line per
 * source; the failures are on /status, and a manifest that changed only by
 * them is loaded without "new data loaded".
 */

import assert from "node:assert/strict";
import { fetchFresh, startServe, waitFor } from "../../_serve_process.ts";
import { runUpdate } from "../../../src/data/update/update.ts";
import { feedSource, startFeedServer, writeBaseDataDir } from "../../data/update/_feed_server.ts";

Deno.test("a scheduled update on a closed network says one line, and loads no 'new data'", async () => {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    feeds.routes.set("/asn.mmdb", {
      body: await Deno.readFile(`${dataDir}/asn.mmdb`),
      etag: '"asn"',
    });
    const asn = { ...feedSource(feeds, "test-asn", "asn", "/asn.mmdb"), format: "mmdb" as const };
    // Installed before the server starts: its update finds it not modified.
    await runUpdate({
      dataDir,
      sources: [asn],
      registry: "http://127.0.0.1:9",
      timeoutMs: 2000,
      progress: () => {},
    });
    const port = feeds.url("/").split(":")[2]!.split("/")[0];
    const sources = [
      asn,
      feedSource(feeds, "tor-a", "tor", "/tor-a.txt"),
      feedSource(feeds, "tor-b", "tor", "/tor-b.txt"),
      // Nothing listens there: the connection is refused.
      { ...feedSource(feeds, "vpn", "vpn", "/vpn.txt"), url: "http://127.0.0.1:9/vpn.txt" },
    ];
    await Deno.writeTextFile(`${dataDir}/sources.json`, JSON.stringify({ sources }));
    const server = await startServe({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_SOURCES: `${dataDir}/sources.json`,
      IPINTEL_UPDATE_INTERVAL: "1d",
      IPINTEL_UPDATE_TIMEOUT: "2",
      IPINTEL_AUTH: "off",
      IPINTEL_KV: ":memory:",
      IPINTEL_WORKERS: "1",
    });
    try {
      await waitFor(() => /trying again in/.test(server.stderr()), 30_000).catch(() => {
        throw new Error(`no retry said:\n${server.stderr()}`);
      });
      const lines = server.stderr().split("\n").filter((l) => l.startsWith("update:"));
      assert.equal(lines.length, 1, server.stderr());
      assert.match(
        lines[0]!,
        new RegExp(
          `^update: 0 updated, 1 unchanged, 3 failed \\(\\d+\\.\\d s\\); failed: 127\\.0\\.0\\.1:${port}, 127\\.0\\.0\\.1:9 \\(details at /status\\); trying again in 60 s$`,
        ),
      );
      assert.doesNotMatch(server.stderr(), /FAILED/);
      // The failures reach /status (the new manifest is loaded)...
      const base = `http://127.0.0.1:${server.port}`;
      let reason = "";
      const deadline = Date.now() + 10_000;
      while (!/404/.test(reason) && Date.now() < deadline) {
        const status = (await (await fetchFresh(`${base}/status`)).json()).data.sources as {
          name: string;
          reason?: string;
        }[];
        reason = status.find((s) => s.name === "tor-a")?.reason ?? "";
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.match(reason, /HTTP 404/);
      // ...as the same data: nothing says it is new.
      assert.doesNotMatch(server.stderr(), /new data loaded/);
    } finally {
      await server.stop();
    }
  } finally {
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
