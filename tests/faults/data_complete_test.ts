/**
 * Complete or not ready: a data directory whose first build was cut short (the
 * manifest lists the ASN database, not the City) is served as it is, /ready says
 * what is missing, and the server builds the City database in the background,
 * then answers ready and locates 8.8.8.8, without a restart.
 */

import assert from "node:assert/strict";
import { fetchFresh, startServe } from "../_serve_process.ts";
import { cliEnv, runCli, startFaultServer } from "./_data_fixture.ts";

Deno.test("data: a set missing its City database is completed in the background; not ready until then", async () => {
  const server = await startFaultServer();
  const dir = await Deno.makeTempDir({ prefix: "ipintel-fault-complete-" });
  const release = Promise.withResolvers<void>();
  try {
    const sources = await server.sourcesFile(dir);
    const dataDir = `${dir}/data`;
    await Deno.mkdir(dataDir);
    const env = cliEnv(dataDir, sources);
    assert.equal((await runCli(["data"], env)).code, 0);
    // The interrupted first build: the City entry never made it into the manifest.
    const manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
    manifest.sources = manifest.sources.filter((e: { kind: string }) => e.kind !== "city");
    await Deno.writeTextFile(`${dataDir}/manifest.json`, JSON.stringify(manifest));
    // The registry holds the City tarball back until the test has seen "not ready".
    const path = "/fault-city/-/fault-city-1.0.0.tgz";
    const tarball = await (await fetch(`${server.url}${path}`)).bytes();
    server.routes.set(path, async () => {
      await release.promise;
      return new Response(tarball);
    });
    const serve = await startServe(env); // IPINTEL_UPDATE_INTERVAL=off: no feeds, still completes
    try {
      const base = `http://127.0.0.1:${serve.port}`;
      const notReady = await fetchFresh(`${base}/ready`);
      assert.equal(notReady.status, 503);
      assert.match(
        (await notReady.json()).message,
        /^Not ready: not installed yet: city \(city\)$/,
      );
      const asn = await (await fetchFresh(`${base}/ip/8.8.8.8?get=asn_number`)).json();
      assert.equal(asn.data.asn_number, 15169, "serving what is there meanwhile");
      release.resolve();
      const deadline = Date.now() + 60_000;
      let status = 503;
      while (status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = (await fetchFresh(`${base}/ready`)).status;
      }
      assert.equal(status, 200, serve.stderr());
      const city = await (await fetchFresh(`${base}/ip/8.8.8.8?get=countryCode`)).json();
      assert.equal(city.data.countryCode, "US");
      console.log(
        "data complete: not ready while the City database was missing; ready once built in the background",
      );
    } finally {
      await serve.stop();
    }
  } finally {
    release.resolve();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
