/**
 * A running server after an update that changed no file (every list answered
 * 304, or every source failed): the lists' history is read again, so answers'
 * `lastSeen` advance, and nothing says "new data loaded"; an update that
 * changes a file still says it.
 */

import assert from "node:assert/strict";
import { startHotReload } from "../../../src/process/server/reload.ts";
import { createSharedParts, openServed } from "../../../src/process/server/served.ts";
import { loadConfig } from "../../../src/base/config.ts";
import type { ServedSlot } from "../../../src/service/http/env.ts";
import {
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../../data/update/_feed_server.ts";
import { fixtureApp } from "../../_helpers.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
const TOR_LIST = Deno.readTextFileSync(`${FIXTURES}tor_bulk_exit_list.txt`);
const TOR_EXIT = "185.241.208.232";

Deno.test("lastSeen advances in a running server after an update that only confirmed the lists, quietly", async () => {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  const source = feedSource(feeds, "tor-exits", "tor", "/tor.txt");
  const sourcesFile = `${dataDir}/sources.json`;
  await Deno.writeTextFile(sourcesFile, JSON.stringify({ sources: [source] }));
  feeds.routes.set("/tor.txt", { body: TOR_LIST, etag: '"v1"' });
  await update(dataDir, [source]);

  const config = loadConfig({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_SOURCES: sourcesFile,
    IPINTEL_UPDATE_INTERVAL: "off",
  });
  const shared = createSharedParts();
  const opened = await openServed(config, shared);
  const slot: ServedSlot = { current: opened };
  const log: string[] = [];
  const watch = startHotReload(
    config,
    {
      load: () => openServed(config, shared),
      install: (next) => void (slot.current = next),
      version: (set) => set.data.version.id,
    },
    (line) => log.push(line),
    { pollMs: 100, served: opened },
  );
  const app = await fixtureApp({ slot, config: { bulkMax: 10 } });
  const lastSeen = async () => {
    const res = await app.request(`/ip/${TOR_EXIT}?get=risk`);
    const body = await res.json();
    return {
      seen: body.data.risk.matches[0]?.lastSeen as string,
      version: res.headers.get("x-data-version"),
    };
  };
  const changed = async (from: string) => {
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const now = await lastSeen();
      if (now.seen !== from) return now;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return await lastSeen();
  };
  try {
    const first = await lastSeen();
    assert.match(first.seen, /^\d{4}-/);

    // Confirmed: HTTP 304, no file changes, the manifest is left as it was.
    const manifest = await Deno.readTextFile(`${dataDir}/manifest.json`);
    const confirmed = await update(dataDir, [source]);
    assert.deepEqual(confirmed.outcomes.map((o) => o.status), ["unchanged"]);
    assert.equal(await Deno.readTextFile(`${dataDir}/manifest.json`), manifest);
    const second = await changed(first.seen);
    assert.ok(second.seen > first.seen, `lastSeen did not advance: ${second.seen} (${log})`);
    assert.equal(second.version, first.version, "the same data answers");

    // Every source failed: the failure is recorded, still no file changed.
    feeds.routes.set("/tor.txt", { status: 503, body: "down" });
    const failed = await update(dataDir, [source]);
    assert.deepEqual(failed.outcomes.map((o) => o.status), ["failed"]);
    await changed(second.seen);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(log, [], "nothing said while no file changed");

    // A new list: said once.
    feeds.routes.set("/tor.txt", { body: `${TOR_LIST}198.51.100.7\n`, etag: '"v2"' });
    const updated = await update(dataDir, [source]);
    assert.deepEqual(updated.outcomes.map((o) => o.status), ["updated"]);
    const deadline = Date.now() + 5000;
    while (log.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(log, [`ipintel: new data loaded from ${dataDir}`]);
  } finally {
    watch.close();
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
