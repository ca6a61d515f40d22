/**
 * Streamed bulk faults, as an operator meets them with the real CLI: a reader
 * that stops early (`ipintel lookup - | head -1`), and clients that go away in
 * the middle of a streamed POST /bulk.
 */

import assert from "node:assert/strict";
import { spawnCli } from "../_cli.ts";
import { DEFAULT_DATA_DIR, writeFixtureDataDir } from "../_helpers.ts";
import { fetchFresh, startServe } from "../_serve_process.ts";

Deno.test("lookup - whose reader goes away (| head -1) stops quietly with status 0", async () => {
  const env = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, NO_COLOR: "1" };
  const child = spawnCli(["lookup", "-"], env, "piped");
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  // Addresses for as long as the command reads them.
  const feeding = (async () => {
    const writer = child.stdin.getWriter();
    const lines = new TextEncoder().encode("8.8.8.8\n1.1.1.1\n".repeat(5000));
    try {
      for (;;) await writer.write(lines);
    } catch {
      // the command exited
    }
  })();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.match(new TextDecoder().decode(first.value), /^\{"ip":"8\.8\.8\.8"/);
  await reader.cancel(); // the pipe closes, as when `head` exits
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
    feeding,
  ]);
  clearTimeout(timer);
  assert.equal(status.code, 0, stderr);
  assert.equal(stderr, "");
});

Deno.test("clients that go away in the middle of streams leave the server serving", async () => {
  const dataDir = await writeFixtureDataDir();
  const server = await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: ":memory:",
    IPINTEL_WORKERS: "1",
    IPINTEL_AUTH: "off",
  });
  try {
    const url = `http://127.0.0.1:${server.port}/bulk?format=ndjson`;
    const line = new TextEncoder().encode("81.2.69.142\n9.9.9.9\n".repeat(100));
    for (let i = 0; i < 3; i++) {
      const abort = new AbortController();
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(line) }),
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      assert.match(new TextDecoder().decode((await reader.read()).value), /^\{"ip":"81\.2/);
      abort.abort();
      await reader.cancel().catch(() => {});
    }
    assert.equal((await fetchFresh(`http://127.0.0.1:${server.port}/health`)).status, 200);
    const after = await fetchFresh(url, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "81.2.69.142\n",
    });
    assert.equal(after.status, 200);
    assert.equal(JSON.parse(await after.text()).geoLocation.countryCode, "GB");
    assert.doesNotMatch(server.stderr(), /Internal server error|Uncaught/);
  } finally {
    await server.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
});
