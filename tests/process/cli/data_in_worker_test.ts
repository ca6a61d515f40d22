/**
 * The server's data jobs in their worker: the job's outcome comes back (its
 * exit code, or its error), and a stop request ends a job stuck on a download
 * with the data directory's lock released.
 */

import assert from "node:assert/strict";
import { runDataJobInWorker } from "../../../src/process/cli/data_in_worker.ts";
import { loadConfig } from "../../../src/base/config.ts";
import { lockDataDir } from "../../../src/data/update/lock.ts";
import { feedSource, startFeedServer, writeBaseDataDir } from "../../data/update/_feed_server.ts";
import { waitFor } from "../../_serve_process.ts";

Deno.test("a data job in its worker: its error comes back naming the input", async () => {
  const dataDir = await writeBaseDataDir();
  try {
    const config = loadConfig({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_SOURCES: `${dataDir}/no-such-sources.json`,
    });
    await assert.rejects(
      runDataJobInWorker("update", config, new AbortController().signal),
      /no-such-sources\.json/,
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a stopped data job ends, and the data directory's lock is free", async () => {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    feeds.routes.set("/hang.txt", { hang: true });
    const sources = [feedSource(feeds, "stuck", "threat", "/hang.txt")];
    await Deno.writeTextFile(`${dataDir}/sources.json`, JSON.stringify({ sources }));
    const config = loadConfig({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_SOURCES: `${dataDir}/sources.json`,
      IPINTEL_UPDATE_TIMEOUT: "300",
    });
    const stop = new AbortController();
    const job = runDataJobInWorker("update", config, stop.signal);
    // Stopped while the download hangs.
    await waitFor(() => feeds.requests.some((r) => r.path === "/hang.txt"));
    stop.abort();
    const outcome = await job.then((code) => `exit ${code}`, (error) => error.message);
    assert.match(outcome, /cancel|stopped|exit 1/);
    using _lock = await lockDataDir(dataDir, { purpose: "test", wait: false });
  } finally {
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
