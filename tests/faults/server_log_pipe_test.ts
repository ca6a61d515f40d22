/**
 * The access log cannot stop or stall the server: with its stdout closed
 * (`ipintel serve | head -c 100`) or never read (a stuck log shipper), every
 * request is still answered; the lines that cannot be written are dropped and
 * counted in /metrics, and the server still stops cleanly.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { fetchFresh, type ServeProcess, startServe } from "../_serve_process.ts";

async function serveLogging(dataDir: string): Promise<ServeProcess> {
  return await startServe(
    {
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_KV: `${dataDir}/test.kv`,
      IPINTEL_AUTH: "off",
      IPINTEL_LOG: "on",
      IPINTEL_WORKERS: "2",
    },
    ["-A"],
    "piped",
  );
}

/** `count` lookups, `concurrency` at a time over kept-alive connections; the statuses seen. */
async function lookups(port: number, count: number, concurrency = 8): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < count) {
      let outcome: string;
      try {
        const response = await fetch(`http://127.0.0.1:${port}/ip/81.2.69.142`, {
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
        outcome = String(response.status);
      } catch (error) {
        outcome = String(error);
      }
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
    }
  }));
  return seen;
}

async function dropped(port: number): Promise<number> {
  const metrics = await (await fetchFresh(`http://127.0.0.1:${port}/metrics`)).text();
  const count = /ipintel_log_lines_dropped_total (\d+)/.exec(metrics)?.[1];
  assert.ok(count !== undefined, `no ipintel_log_lines_dropped_total in /metrics:\n${metrics}`);
  return Number(count);
}

/** SIGTERM; the exit status within 20 s (null when it did not exit). */
async function stopWithin(server: ServeProcess): Promise<number | null> {
  server.child.kill("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(resolve, 20_000, null));
  const status = await Promise.race([server.child.status, late]);
  clearTimeout(timer);
  return status?.code ?? null;
}

Deno.test("stdout closed (serve | head -c 100): the server keeps answering, counts the lines it drops, stops cleanly", async () => {
  const dataDir = await writeFixtureDataDir();
  const server = await serveLogging(dataDir);
  try {
    // Read the first 100 bytes of the access log, then close the pipe, as `head -c 100` does.
    const reader = server.child.stdout.getReader();
    let read = 0;
    while (read < 100) {
      await lookups(server.port, 5, 1);
      const { value } = await reader.read();
      read += value?.length ?? 0;
    }
    await reader.cancel();
    const seen = await lookups(server.port, 2000);
    assert.deepEqual([...seen], [["200", 2000]]);
    // Written within 100 ms of the request (batched); give the last batch time to fail.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lost = await dropped(server.port);
    assert.ok(lost > 0, `${lost} lines counted as dropped`);
    const after = await lookups(server.port, 200);
    assert.deepEqual([...after], [["200", 200]]);
    assert.match(server.stderr(), /log lines dropped \(.*Broken pipe/);
    assert.equal(await stopWithin(server), 0, server.stderr());
    console.log(
      `  stdout closed after ${read} bytes: 2,200 lookups answered 200, 0 failed; ${lost} log lines dropped and counted; exit 0`,
    );
  } finally {
    await server.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("stdout never read (a full pipe): requests are not held up, the queue is bounded, the overflow counted", async () => {
  const dataDir = await writeFixtureDataDir();
  const server = await serveLogging(dataDir);
  try {
    const started = performance.now();
    let answered = 0;
    // Enough lines (about 170 bytes each) to fill the pipe (64 KiB) and the queue (1 MiB).
    while ((await dropped(server.port)) === 0) {
      const seen = await lookups(server.port, 2000);
      assert.deepEqual([...seen], [["200", 2000]]);
      answered += 2000;
      assert.ok(
        answered <= 40_000,
        "no line dropped after 40,000 requests: the queue is not bounded",
      );
    }
    const seconds = (performance.now() - started) / 1000;
    const lost = await dropped(server.port);
    assert.equal(await stopWithin(server), 0, server.stderr());
    console.log(
      `  stdout never read: ${answered} lookups answered 200 in ${
        seconds.toFixed(1)
      } s (shared 2-core machine), 0 failed; ${lost} log lines dropped and counted; exit 0`,
    );
  } finally {
    await server.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});
