/**
 * The Deno Deploy entry point, run as Deploy would: without write permission
 * (so nothing may be written to disk), the KV from Deno.openKv() with no
 * path, the data read from files. It must answer lookups.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../../_helpers.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const ENTRY = "deploy/deno_deploy.ts";

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

Deno.test("the Deno Deploy entry serves lookups with write permission denied", async () => {
  const dataDir = await writeFixtureDataDir();
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    // No --allow-write, and no prompt: any write to disk would throw.
    args: ["run", "--no-prompt", "--allow-read", "--allow-net", "--allow-env", ENTRY],
    cwd: ROOT,
    env: { PORT: String(port), IPINTEL_DATA_DIR: dataDir, IPINTEL_AUTH: "off", IPINTEL_LOG: "on" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  try {
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`${base}/ready`).then(async (
        r,
      ) => (await r.body?.cancel(), r.status))
        .catch(() => 0);
      if (ready === 200) break;
      if (Date.now() > deadline) throw new Error("the Deploy entry did not become ready");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const response = await fetch(`${base}/ip/81.2.69.142`);
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.data.geoLocation.city, "London");
    assert.equal(body.data.connection.asn_number, 20712);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(
      metrics,
      /^ipintel_http_requests_total\{method="GET",route="\/ip\/\{ip\}",status="200"\} 1$/m,
    );
  } finally {
    child.kill("SIGTERM");
    const { stdout, stderr } = await output;
    await Deno.remove(dataDir, { recursive: true });
    const errors = new TextDecoder().decode(stderr);
    assert.doesNotMatch(errors, /PermissionDenied|NotCapable|Requires write access/, errors);
    // The access log went to stdout (console.log), one JSON line per request.
    const lines = new TextDecoder().decode(stdout).trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(lines.some((l) => l.route === "/ip/{ip}" && l.status === 200), JSON.stringify(lines));
  }
});

Deno.test("the Deno Deploy entry's module graph has no node:http", async () => {
  const { stdout, success } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ENTRY],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(success);
  const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { specifier: string }[];
  };
  const specifiers = graph.modules.map((m) => m.specifier);
  assert.ok(specifiers.some((s) => s.endsWith("/src/service/app/app.ts")), "the graph was read");
  assert.ok(!specifiers.some((s) => /^node:(http|https|http2)$/.test(s)), specifiers.join("\n"));
  assert.ok(!specifiers.some((s) => s.endsWith("/src/service/http/node_server.ts")));
});
