/**
 * The workers' data hand-off: a verified set reaches every worker in two
 * steps (open, then switch), so a set one cannot open is switched to by none.
 * Real workers, each on a port of its own (port 0), asked over HTTP.
 */

import assert from "node:assert/strict";
import { loadConfig } from "../../../src/base/config.ts";
import { openSharedData } from "../../../src/process/server/served.ts";
import { WorkerPool } from "../../../src/process/server/worker_pool.ts";
import { sharedCountsBuffer } from "../../../src/service/ops/metrics.ts";
import { rateTableBuffer } from "../../../src/service/keys_limits/rate_table.ts";
import { readManifest, writeManifest } from "../../../src/data/sources/manifest.ts";
import { writeFixtureDataDir } from "../../_helpers.ts";
import { fetchFresh } from "../../_serve_process.ts";

Deno.test("a set a worker cannot open is switched to by none; a good one then by all, read by no worker", async () => {
  const dataDir = await writeFixtureDataDir();
  const sourcesFile = `${dataDir}/sources.json`;
  await Deno.copyFile(new URL("../../../data/sources.json", import.meta.url), sourcesFile);
  const config = loadConfig({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_SOURCES: sourcesFile,
    IPINTEL_KV: ":memory:",
    IPINTEL_AUTH: "off",
    IPINTEL_LOG: "off",
    PORT: "0",
  });
  const pool = new WorkerPool(config, sharedCountsBuffer(3), () => {}, rateTableBuffer());
  const asnSeen = async (ports: number[]) =>
    await Promise.all(ports.map(async (port) => {
      const response = await fetchFresh(`http://127.0.0.1:${port}/ip/81.2.69.142?get=asn_number`);
      return (await response.json()).data.asn_number as number | null;
    }));
  try {
    const ports = await pool.start(2, 0);
    const first = await openSharedData(config);
    await pool.prepare(first.handoff);
    await pool.commit();
    const asn = (await asnSeen(ports))[0];
    assert.equal(typeof asn, "number");

    // The City bytes handed over are not a database: both workers refuse the set.
    const files = new Map(first.handoff.files.files);
    files.set(`${dataDir}/city.mmdb`, { bytes: new Uint8Array(64), networks: 0 });
    const broken = { ...first.handoff, files: { ...first.handoff.files, files } };
    await assert.rejects(pool.prepare(broken), /worker 0: .*city.*; worker 1: /);
    assert.deepEqual(await asnSeen(ports), [asn, asn]);

    // A good set without the ASN database reaches both, though every file is gone by the
    // time they open it: they read none (no second read of files that may have changed).
    const manifest = (await readManifest(dataDir))!;
    await writeManifest(dataDir, { sources: manifest.sources.filter((e) => e.kind !== "asn") });
    const second = await openSharedData(config);
    for await (const entry of Deno.readDir(dataDir)) await Deno.remove(`${dataDir}/${entry.name}`);
    await pool.prepare(second.handoff);
    await pool.commit();
    assert.deepEqual(await asnSeen(ports), [null, null]);
  } finally {
    await pool.stop(1000).drained;
    await Deno.remove(dataDir, { recursive: true });
  }
});
