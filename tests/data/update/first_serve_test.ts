/**
 * Fresh by default: a server on a data directory without its feeds fetches them in the
 * background right after it listens (from a local feed server here), without a restart;
 * a feed that cannot be fetched is reported in /status with its reason, its URL's
 * secrets redacted, and /ready does not wait for feeds.
 */

import assert from "node:assert/strict";
import { fetchFresh, startServe, waitFor } from "../../_serve_process.ts";
import { readManifest } from "../../../src/data/sources/manifest.ts";
import { feedSource, startFeedServer, writeBaseDataDir } from "./_feed_server.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;

Deno.test("a fresh data directory gets its feeds without a restart", async () => {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    const manifest = (await readManifest(dataDir))!;
    feeds.routes.set("/asn.mmdb", { body: await Deno.readFile(`${dataDir}/asn.mmdb`) });
    feeds.routes.set("/tor.txt", {
      body: await Deno.readFile(`${FIXTURES}tor_bulk_exit_list.txt`),
    });
    const sources = [
      { ...feedSource(feeds, "test-asn", "asn", "/asn.mmdb"), format: "mmdb" },
      feedSource(feeds, "tor-exits", "tor", "/tor.txt"),
      // Never answers 200: reported, with the token hidden.
      feedSource(feeds, "broken", "threat", "/missing.txt?token=hunter2"),
    ];
    await Deno.writeTextFile(`${dataDir}/sources.json`, JSON.stringify({ sources }));
    assert.equal(manifest.sources.some((e) => e.kind === "tor"), false, "no feeds at start");
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
      const ready = await fetchFresh(`${base}/ready`);
      assert.equal(ready.status, 200, "ready at once: feeds do not block readiness");
      let status: { name: string; status: string; reason?: string; source?: string }[] = [];
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        status = (await (await fetchFresh(`${base}/status`)).json()).data.sources;
        if (status.find((s) => s.name === "tor-exits")?.status === "installed") break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(
        status.find((s) => s.name === "tor-exits")?.status,
        "installed",
        server.stderr(),
      );
      const broken = status.find((s) => s.name === "broken")!;
      assert.equal(broken.status, "absent");
      // Scheme and host only (IPINTEL_STATUS_DETAIL is off): no path, no query.
      assert.match(broken.reason!, /HTTP 404 \(not found\) from http:\/\/127\.0\.0\.1:\d+$/);
      assert.doesNotMatch(JSON.stringify(status) + server.stderr(), /hunter2/);
      await waitFor(() => /trying again in 60 s/.test(server.stderr()), 10_000);
      const tor = await (await fetchFresh(`${base}/ip/185.241.208.232?get=security`)).json();
      assert.equal(tor.data.security.isTor, true);
    } finally {
      await server.stop();
    }
  } finally {
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
