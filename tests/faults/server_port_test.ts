/**
 * One server per port: starting ipintel on a port an ipintel (with workers,
 * which share it with SO_REUSEPORT) or any other program already listens on
 * is an error at start naming the port, never a second server splitting the
 * traffic with the first.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { fetchFresh, startServe } from "../_serve_process.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** `ipintel serve --port <port>`: its exit status and stderr, or null when it was still running after 30 s. */
async function serveOn(
  port: number,
  env: Record<string, string>,
): Promise<{ code: number; stderr: string } | null> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "serve", "--port", String(port)],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(resolve, 30_000, null));
  const output = child.output();
  const done = await Promise.race([output, late]);
  clearTimeout(timer);
  if (done === null) {
    child.kill("SIGKILL");
    await output;
    return null;
  }
  return { code: done.code, stderr: new TextDecoder().decode(done.stderr) };
}

for (const workers of [1, 3]) {
  Deno.test(`a second ipintel on a served port (${workers} worker(s) each) exits naming the port; the first serves on`, async () => {
    const dataDir = await writeFixtureDataDir();
    const env = (name: string) => ({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_KV: `${dataDir}/${name}.kv`,
      IPINTEL_LOG: "off",
      IPINTEL_WORKERS: String(workers),
      // The second one would answer 401 where the first answers 200, as in the report.
      IPINTEL_AUTH: name === "first" ? "off" : "required",
    });
    const first = await startServe(env("first"));
    try {
      const started = performance.now();
      const second = await serveOn(first.port, env("second"));
      const seconds = (performance.now() - started) / 1000;
      assert.ok(second, "the second server did not exit");
      assert.equal(second.code, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(`Port ${first.port} on 127\\.0\\.0\\.1 is already in use`),
      );
      // Every connection still reaches the first server.
      for (let i = 0; i < 20; i++) {
        assert.equal(
          (await fetchFresh(`http://127.0.0.1:${first.port}/ip/81.2.69.142`)).status,
          200,
        );
      }
      console.log(
        `  second server (${workers} worker(s)) on port ${first.port}: exit ${second.code} after ${
          seconds.toFixed(1)
        } s, "${
          second.stderr.trim().split("\n").at(-1)
        }"; 20/20 requests then answered by the first`,
      );
    } finally {
      await first.kill();
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}

Deno.test("a port another program listens on (on the wildcard address) is refused at start, naming it", async () => {
  const dataDir = await writeFixtureDataDir();
  const other = Deno.listen({ hostname: "0.0.0.0", port: 0 });
  const port = (other.addr as Deno.NetAddr).port;
  try {
    for (const workers of ["1", "3"]) {
      const result = await serveOn(port, {
        IPINTEL_DATA_DIR: dataDir,
        IPINTEL_KV: `${dataDir}/test.kv`,
        IPINTEL_LOG: "off",
        IPINTEL_WORKERS: workers,
      });
      assert.ok(result, "ipintel did not exit");
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use`));
    }
  } finally {
    other.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
