/**
 * What a compiled binary relies on, checked under `deno run` (a runnable
 * binary cannot be built here: `deno compile` downloads its runtime): the
 * default data directory is read relative to the code (where
 * `deno compile --include data/` embeds it), without writing to it, and the
 * KV default moves out of the read-only embedded data.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { kvLocation } from "../../../src/process/server/kv.ts";
import { DEFAULT_DATA_DIR, isEmbeddedData } from "../../../src/base/config.ts";
import { DEFAULT_DATA_DIR as REPO_DATA_DIR } from "../../_helpers.ts";
import { startServe } from "../../_serve_process.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;

Deno.test("the default data directory is data/ beside the code, as deno compile --include embeds it", () => {
  assert.equal(DEFAULT_DATA_DIR(), join(REPO_DATA_DIR));
  assert.equal(isEmbeddedData(DEFAULT_DATA_DIR(), true), true);
  assert.equal(isEmbeddedData(DEFAULT_DATA_DIR(), false), false, "deno run: a writable checkout");
  assert.equal(isEmbeddedData("/srv/ipintel/data", true), false, "a configured directory");
});

Deno.test("the KV default: beside the data, except for a binary's embedded data (working directory)", () => {
  const embedded = { kv: null, dataDir: DEFAULT_DATA_DIR() };
  assert.equal(kvLocation(embedded, true), join(Deno.cwd(), "ipintel.kv"));
  assert.equal(kvLocation(embedded, false), join(ROOT, "ipintel.kv"));
  assert.equal(
    kvLocation({ kv: null, dataDir: "/srv/ipintel/data" }, true),
    "/srv/ipintel/ipintel.kv",
  );
  assert.equal(
    kvLocation({ kv: "/var/lib/x.kv", dataDir: DEFAULT_DATA_DIR() }, true),
    "/var/lib/x.kv",
  );
});

Deno.test("serve reads the default data without any write permission on it", async () => {
  const work = await Deno.makeTempDir({ prefix: "ipintel-readonly-" });
  // Writes allowed only in a scratch directory (the KV); the code and data/ are read-only.
  const server = await startServe(
    { IPINTEL_KV: join(work, "ipintel.kv"), IPINTEL_AUTH: "off", IPINTEL_DATA_DIR: "" },
    ["--no-prompt", "--allow-read", "--allow-net", "--allow-env", `--allow-write=${work}`],
  );
  try {
    const port = server.port;
    const response = await fetch(`http://127.0.0.1:${port}/ip/8.8.8.8?get=countryCode,asn_number`);
    assert.deepEqual(await response.json(), {
      success: true,
      data: { ip: "8.8.8.8", countryCode: "US", asn_number: 15169 },
    });
    assert.match(server.stderr(), new RegExp(`data loaded from ${REPO_DATA_DIR}`));
  } finally {
    await server.stop();
    await Deno.remove(work, { recursive: true });
  }
});
