/**
 * A failing reload cannot take a server with workers down, nor split it: 20
 * reloads that fail (a database that does not verify, a sources file that
 * does not parse) under load leave every isolate on the previous set with no
 * failed request; each is logged and counted. A good reload then reaches
 * every isolate before "new data loaded" is printed.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { fetchFresh, startServe, waitFor } from "../_serve_process.ts";
import { readManifest, writeManifest } from "../../src/data/sources/manifest.ts";
import { startLoad } from "./_server_load.ts";

const ROUNDS = 20;
const SOURCES = new URL("../../data/sources.json", import.meta.url).pathname;

Deno.test(`${ROUNDS} failing reloads in worker mode under load: no request fails, the old set stays everywhere`, async () => {
  const dataDir = await writeFixtureDataDir();
  const sourcesFile = `${dataDir}/sources.json`;
  const validSources = await Deno.readTextFile(SOURCES);
  await Deno.writeTextFile(sourcesFile, validSources);
  // Not a MaxMind DB: verification refuses it.
  await Deno.writeFile(`${dataDir}/broken.mmdb`, new TextEncoder().encode("not a database\n"));
  const base = (await readManifest(dataDir))!;
  const server = await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_SOURCES: sourcesFile,
    IPINTEL_KV: `${dataDir}/test.kv`,
    IPINTEL_AUTH: "off",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: "3",
    // No update of its own: the server's background fetch of the (absent) feeds would rewrite
    // the manifest this test writes, and count reloads of its own.
    IPINTEL_UPDATE_INTERVAL: "off",
  });
  const url = `http://127.0.0.1:${server.port}/ip/81.2.69.142?get=asn_number`;
  // The fixture's ASN database knows the address; the good reload below drops that database.
  const asnOf = (body: string) => JSON.parse(body).data.asn_number as number | null;
  const answers = { old: 0, new: 0 };
  const load = startLoad(url, 4, (body) => asnOf(body) === null ? answers.new++ : answers.old++);
  const failedReloads = () =>
    server.stderr().match(/not loaded, still serving the previous set/g)?.length ?? 0;
  try {
    const started = performance.now();
    for (let round = 1; round <= ROUNDS; round++) {
      // Each round a manifest of new content (the watch reloads on a change of content).
      const marked = (sources: typeof base.sources) =>
        sources.map((entry) => ({ ...entry, attribution: `round ${round}` }));
      if (round % 2) {
        await writeManifest(dataDir, {
          sources: marked(
            base.sources.map((e) => e.kind === "city" ? { ...e, file: "broken.mmdb" } : e),
          ),
        });
      } else {
        await Deno.writeTextFile(sourcesFile, '{ "sources": "not a list" }');
        await writeManifest(dataDir, { sources: marked(base.sources) });
      }
      await waitFor(() => failedReloads() === round, 20_000);
      await Deno.writeTextFile(sourcesFile, validSources);
    }
    const failingSeconds = (performance.now() - started) / 1000;
    assert.equal(answers.new, 0, "an isolate served a set that failed");
    const beforeGood = { ...answers };

    await writeManifest(dataDir, { sources: base.sources.filter((e) => e.kind !== "asn") });
    await waitFor(() => /new data loaded/.test(server.stderr()), 20_000);
    // Announced once every isolate has it: 30 new connections, whichever isolate they reach.
    for (let i = 0; i < 30; i++) {
      const response = await fetchFresh(url);
      assert.equal(asnOf(await response.text()), null, `answer ${i} after the announcement`);
    }
    const result = await load.stop();
    assert.deepEqual(result.failures, [], server.stderr());
    const metrics = await (await fetchFresh(`http://127.0.0.1:${server.port}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(`ipintel_data_reloads_total\\{result="failure"\\} ${ROUNDS}\\n`),
    );
    assert.match(metrics, /ipintel_data_reloads_total\{result="success"\} 1\n/);
    assert.match(metrics, /ipintel_uncaught_errors_total 0\n/);
    assert.match(server.stderr(), /broken\.mmdb/); // the log says why
    assert.match(server.stderr(), /Invalid sources file/);
    assert.doesNotMatch(server.stderr(), /unhandled|uncaught|stopping/i);
    console.log(
      `  ${ROUNDS} failing reloads in ${failingSeconds.toFixed(1)} s (3 isolates, 4 clients): ` +
        `${beforeGood.old} requests answered from the old set, 0 from a failed one, ` +
        `${result.total} requests in all, ${result.failures.length} failed; good reload then seen by 30/30 new connections`,
    );
  } finally {
    await load.stop();
    await server.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});
