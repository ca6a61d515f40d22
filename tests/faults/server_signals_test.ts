/**
 * Signals: `kill -TERM -PGID` (what systemd and container runtimes do) on a
 * server started by `deno task`, whose wrapper forwards the signal again, is
 * one graceful stop: a bulk request in flight completes. Only a signal that
 * comes a second or more after the first skips the drain.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { readToClose, startServe, waitFor } from "../_serve_process.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const BODY = JSON.stringify({ ips: ["81.2.69.142", "2a02:ec0::1"] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A POST /bulk whose head and first 10 body bytes are sent: in flight until `finish()`. */
async function bulkInFlight(port: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = "POST /bulk?get=countryCode HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
    `Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\nConnection: close\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head + BODY.slice(0, 10)));
  return {
    /** Sends the rest and reads the answer (empty when the connection was cut). */
    async finish(): Promise<string> {
      try {
        await conn.write(new TextEncoder().encode(BODY.slice(10)));
      } catch {
        // cut already
      }
      const response = await readToClose(conn);
      conn.close();
      return response;
    },
  };
}

/** `deno task ipintel serve` in a process group of its own (the task wrapper leads it). */
async function startTask(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "ipintel", "serve", "--port", "0"],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) text += decoder.decode(chunk, { stream: true });
  })();
  const stderr = () => text;
  try {
    await waitFor(() => /data loaded/.test(text), 60_000);
  } catch (error) {
    Deno.kill(-child.pid, "SIGKILL");
    throw new Error(`${error}:\n${text}`);
  }
  const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text)![1]);
  return { child, port, stderr };
}

Deno.test("the process group of `deno task` signalled (twice within a second) during a bulk request: it completes, exit 0", async () => {
  const dataDir = await writeFixtureDataDir();
  const task = await startTask({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: `${dataDir}/test.kv`,
    IPINTEL_AUTH: "off",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: "2",
    IPINTEL_SHUTDOWN_TIMEOUT: "20",
  });
  try {
    const bulk = await bulkInFlight(task.port);
    await sleep(200);
    const signalled = performance.now();
    // The task wrapper and the server each get it; the wrapper forwards its copy to the
    // server. A second group signal 300 ms later is still the same stop.
    Deno.kill(-task.child.pid, "SIGTERM");
    await sleep(300);
    Deno.kill(-task.child.pid, "SIGTERM");
    await waitFor(() => /SIGTERM: stopping; 1 request\(s\) in flight/.test(task.stderr()));
    // Past the second within which signals are one stop: a hurried server would be gone.
    await sleep(Math.max(0, 1500 - (performance.now() - signalled)));
    const response = await bulk.finish();
    const seconds = (performance.now() - signalled) / 1000;
    assert.match(response, /^HTTP\/1\.1 200 /, task.stderr());
    assert.match(response, /"GB"/);
    assert.match(response, /"DE"/);
    const status = await task.child.status;
    assert.equal(status.code, 0, task.stderr());
    assert.doesNotMatch(task.stderr(), /second signal/);
    assert.match(task.stderr(), /ipintel: stopped/);
    console.log(
      `  group SIGTERM ×2 (300 ms apart) during a bulk request: answered 200 after ${
        seconds.toFixed(1)
      } s, both addresses in it; task exit ${status.code}`,
    );
  } finally {
    try {
      Deno.kill(-task.child.pid, "SIGKILL");
    } catch { /* exited */ }
    await task.child.status;
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a second signal a second or more after the first skips the drain", async () => {
  const dataDir = await writeFixtureDataDir();
  const server = await startServe({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_KV: `${dataDir}/test.kv`,
    IPINTEL_AUTH: "off",
    IPINTEL_LOG: "off",
    IPINTEL_WORKERS: "2",
    IPINTEL_SHUTDOWN_TIMEOUT: "60",
  });
  try {
    const bulk = await bulkInFlight(server.port);
    await sleep(200);
    server.child.kill("SIGTERM");
    await waitFor(() => /SIGTERM: stopping; 1 request\(s\) in flight/.test(server.stderr()));
    await sleep(1200);
    const hurried = performance.now();
    server.child.kill("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => timer = setTimeout(resolve, 15_000, null));
    const status = await Promise.race([server.child.status, late]);
    clearTimeout(timer);
    assert.ok(status, "still waiting for the request in flight after the second signal");
    assert.match(server.stderr(), /a second signal: not waiting for requests in flight/);
    assert.doesNotMatch(await bulk.finish(), /^HTTP\/1\.1 200 /);
    console.log(
      `  second SIGTERM 1.2 s after the first: exit ${status.code} ${
        ((performance.now() - hurried) / 1000).toFixed(1)
      } s later (IPINTEL_SHUTDOWN_TIMEOUT=60), the request in flight cut`,
    );
  } finally {
    await server.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});
