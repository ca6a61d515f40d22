/**
 * Two to four `data update` runs at once, 20 rounds, against a local registry:
 * the data-directory lock makes them take turns, so no manifest ever names a
 * missing or mismatched file and every run exits 0.
 */

import assert from "node:assert/strict";
import { cliEnv, manifestProblems, runCli, startFaultServer } from "./_data_fixture.ts";

const ROUNDS = 20;

Deno.test("data: 2-4 concurrent data update runs x 20 rounds leave 0 broken manifests", async () => {
  const server = await startFaultServer();
  const dir = await Deno.makeTempDir({ prefix: "ipintel-fault-concurrent-" });
  try {
    const sources = await server.sourcesFile(dir);
    const dataDir = `${dir}/data`;
    await Deno.mkdir(dataDir);
    const env = cliEnv(dataDir, sources);
    let runs = 0, waited = 0, broken = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const parallel = 2 + (round % 3);
      const results = await Promise.all(
        Array.from({ length: parallel }, () => runCli(["data", "update"], env)),
      );
      for (const r of results) {
        assert.equal(r.code, 0, r.stderr);
        if (/waiting for process \d+/.test(r.stderr)) waited++;
      }
      runs += parallel;
      const problems = await manifestProblems(dataDir);
      broken += problems.length ? 1 : 0;
      assert.deepEqual(problems, [], `round ${round}`);
      const lookup = await runCli(["lookup", "8.8.8.8", "--get", "asn_number"], env);
      assert.equal(JSON.parse(lookup.stdout).asn_number, 15169, lookup.stderr);
    }
    console.log(
      `data concurrent: ${ROUNDS} rounds, ${runs} data update runs (2-4 at once); ` +
        `${waited} waited for the lock naming its holder; ${broken} manifests naming a missing or mismatched file`,
    );
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
