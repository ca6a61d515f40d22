/**
 * The offline recipe: a server started with updates off and no sources file
 * (IPINTEL_SOURCES), then `data update` run with one. The server reports the
 * sources that were installed (the manifest records the file), not the
 * default file; a source not installed says that updates are off and the
 * command that installs it, with the sources file it belongs to.
 */

import assert from "node:assert/strict";
import { fetchFresh, startServe, waitFor } from "../../_serve_process.ts";
import { runCli } from "../../_cli.ts";
import { loadConfig } from "../../../src/base/config.ts";
import { readManifest, writeManifest } from "../../../src/data/sources/manifest.ts";
import { feedSource, startFeedServer, writeBaseDataDir } from "../../data/update/_feed_server.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;

type StatusSource = { name: string; status: string; reason?: string };

Deno.test("after data update with another sources file, the server reports the installed sources", async () => {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    feeds.routes.set("/asn.mmdb", { body: await Deno.readFile(`${dataDir}/asn.mmdb`) });
    feeds.routes.set("/tor.txt", {
      body: await Deno.readFile(`${FIXTURES}tor_bulk_exit_list.txt`),
    });
    const asn = { ...feedSource(feeds, "test-asn", "asn", "/asn.mmdb"), format: "mmdb" };
    // Installed from the default sources file (as the first `data` records it): here a
    // small one, so that the server (given no IPINTEL_SOURCES) builds nothing at start.
    const manifest = (await readManifest(dataDir))!;
    manifest.sourcesFile = {
      path: loadConfig({}).sourcesFile,
      sources: [{ name: "test-asn", kind: "asn" }, { name: "default-tor", kind: "tor" }],
    };
    await writeManifest(dataDir, manifest);
    // The file `data update` is given.
    const given = `${dataDir}/given.json`;
    await Deno.writeTextFile(
      given,
      JSON.stringify({
        sources: [
          asn,
          feedSource(feeds, "tor-exits", "tor", "/tor.txt"),
          feedSource(feeds, "my-vpn", "vpn", "/missing-vpn.txt"),
        ],
      }),
    );
    const env = {
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_UPDATE_INTERVAL: "off",
      IPINTEL_AUTH: "off",
      IPINTEL_KV: ":memory:",
      IPINTEL_STATUS_DETAIL: "on",
    };
    const status = async (port: number) =>
      (await (await fetchFresh(`http://127.0.0.1:${port}/status`)).json()).data
        .sources as StatusSource[];

    const server = await startServe(env);
    try {
      // Before any update: the file the server was given, and updates are off.
      const command = "deno task ipintel data update";
      await waitFor(() => /not installed yet/.test(server.stderr()));
      assert.match(
        server.stderr(),
        new RegExp(`not installed yet .*: default-tor; updates are off .*"${escape(command)}"`),
      );
      const absent = (await status(server.port)).find((s) => s.name === "default-tor")!;
      assert.equal(absent.status, "absent");
      assert.equal(
        absent.reason,
        `Not installed yet, and updates are off (IPINTEL_UPDATE_INTERVAL=off): run "${command}"`,
      );

      const run = await runCli(["data", "update"], {
        IPINTEL_DATA_DIR: dataDir,
        IPINTEL_SOURCES: given,
        IPINTEL_UPDATE_TIMEOUT: "2",
        NO_COLOR: "1",
      });
      assert.equal(run.code, 1, run.stderr); // my-vpn is not there
      assert.equal((await readManifest(dataDir))?.sourcesFile?.path, given);
      await waitFor(() => /new data loaded/.test(server.stderr()), 10_000);
      const sources = await status(server.port);
      assert.deepEqual(
        sources.map((s) => [s.name, s.status]),
        [["test-asn", "installed"], ["tor-exits", "installed"], ["my-vpn", "absent"]],
        "the installed file's sources, not the server's",
      );
      assert.match(sources.find((s) => s.name === "my-vpn")!.reason!, /HTTP 404/);
    } finally {
      await server.stop();
    }

    // A restart reads the same: nothing of the default file.
    await feeds.close();
    const again = await startServe(env);
    try {
      await waitFor(() => /not installed yet/.test(again.stderr()));
      const line = again.stderr().split("\n").find((l) => l.includes("not installed yet"));
      assert.equal(
        line,
        `ipintel: not installed yet (their flags answer null): my-vpn; updates are off (IPINTEL_UPDATE_INTERVAL=off): install them with "IPINTEL_SOURCES=${given} deno task ipintel data update" (details at /status)`,
      );
      assert.deepEqual(
        (await status(again.port)).map((s) => s.name),
        ["test-asn", "tor-exits", "my-vpn"],
      );
    } finally {
      await again.stop();
    }
  } finally {
    await feeds.close().catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
  }
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
