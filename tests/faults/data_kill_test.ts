/**
 * kill -9 at random instants of `data --force` and `data update`, driven as an
 * operator would, against a local registry: after every kill the manifest names
 * only whole files of the right hash, and the data directory answers 8.8.8.8 (or,
 * when the kill came before anything was installed, the next run repairs it).
 * The figures are printed for the closing note.
 */

import assert from "node:assert/strict";
import { startServe } from "../_serve_process.ts";
import { cliEnv, manifestProblems, runCli, spawnCli, startFaultServer } from "./_data_fixture.ts";

const KILLS = 50;

/** The kinds the manifest lists ([] without a manifest). */
async function installedKinds(dataDir: string): Promise<string[]> {
  try {
    const manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
    return manifest.sources.map((e: { kind: string }) => e.kind);
  } catch {
    return [];
  }
}

Deno.test("data: kill -9 at 50 random instants of data and data update leaves a startable directory", async () => {
  const server = await startFaultServer();
  const dir = await Deno.makeTempDir({ prefix: "ipintel-fault-kill-" });
  try {
    const sources = await server.sourcesFile(dir);
    const dataDir = `${dir}/data`;
    await Deno.mkdir(dataDir);
    const env = cliEnv(dataDir, sources);
    // One clean run measures how long a run takes: kills land anywhere inside it.
    const started = performance.now();
    const first = await runCli(["data"], env);
    assert.equal(first.code, 0, first.stderr);
    const span = performance.now() - started;
    let answered = 0, repaired = 0, incomplete = 0;
    for (let i = 0; i < KILLS; i++) {
      const command = i % 2 === 0 ? ["data", "--force"] : ["data", "update"];
      if (i % 10 === 4) {
        // Now and then a first build from an empty directory (the interrupted-first-run case).
        await Deno.remove(dataDir, { recursive: true });
        await Deno.mkdir(dataDir);
      }
      const child = spawnCli(command, env);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * span));
      try {
        child.kill("SIGKILL");
      } catch { /* already finished */ }
      await child.output();
      assert.deepEqual(await manifestProblems(dataDir), [], `kill ${i} (${command.join(" ")})`);
      const expected = { ip: "8.8.8.8", countryCode: "US", asn_number: 15169 };
      const lookup = await runCli(["lookup", "8.8.8.8", "--get", "countryCode,asn_number"], env);
      if (
        lookup.code === 0 && JSON.stringify(JSON.parse(lookup.stdout)) === JSON.stringify(expected)
      ) {
        answered++;
        continue;
      }
      // Only an incomplete set (a first build cut short) may answer otherwise, and /ready
      // says so; the next run completes it.
      const kinds = await installedKinds(dataDir);
      assert.ok(!(kinds.includes("city") && kinds.includes("asn")), `kill ${i}: ${lookup.stdout}`);
      incomplete++;
      const again = await runCli(["data"], env);
      assert.equal(again.code, 0, again.stderr);
      const repairedLookup = await runCli(
        ["lookup", "8.8.8.8", "--get", "countryCode,asn_number"],
        env,
      );
      assert.deepEqual(JSON.parse(repairedLookup.stdout), expected, repairedLookup.stderr);
      repaired++;
    }
    // And the real server starts on what the last kill left, and answers.
    const serve = await startServe(env);
    try {
      const response = await fetch(`http://127.0.0.1:${serve.port}/ip/8.8.8.8?get=countryCode`);
      assert.deepEqual((await response.json()).data, { ip: "8.8.8.8", countryCode: "US" });
    } finally {
      await serve.stop();
    }
    const leftovers = [...Deno.readDirSync(dataDir)].map((e) => e.name)
      .filter((n) => /\.tmp-\d+$|^\.download-/.test(n));
    console.log(
      `data kill -9: ${KILLS} kills within a ${(span / 1000).toFixed(1)} s run; ` +
        `${answered} answered 8.8.8.8 at once, ${incomplete} left an incomplete set (${repaired} repaired by the next run); ` +
        `0 manifests naming a missing or mismatched file; ${leftovers.length} temporaries left until the next run`,
    );
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
