/**
 * Hostile sources, each offered to a real `data update`: a gzip bomb, a body that
 * never ends, a truncated file and a stalled body are each refused with their
 * reason, the installed data stays, and the process's peak memory (VmHWM, Linux)
 * stays far below what the source sent.
 */

import assert from "node:assert/strict";
import { cliEnv, manifestProblems, runCli, spawnCli, startFaultServer } from "./_data_fixture.ts";

const MB = 1_000_000;

/** 1 GB of zeros as gzip, made while streaming (about 1 MB on the wire). */
async function gzipBomb(): Promise<Uint8Array> {
  const zeros = new Uint8Array(MB);
  let sent = 0;
  const source = new ReadableStream<BufferSource>({
    pull(c) {
      if (sent++ === 1000) c.close();
      else c.enqueue(zeros);
    },
  });
  return new Uint8Array(
    await new Response(source.pipeThrough(new CompressionStream("gzip"))).arrayBuffer(),
  );
}

/** Peak resident memory of a running process, in MB (null off Linux). */
function peakMb(pid: number): number | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1000 : null;
  } catch {
    return null;
  }
}

Deno.test("data: hostile sources are refused with their reason, memory bounded", async () => {
  const server = await startFaultServer();
  const dir = await Deno.makeTempDir({ prefix: "ipintel-fault-hostile-" });
  const bomb = await gzipBomb();
  const stalled = new AbortController();
  server.routes.set("/bomb.mmdb.gz", () => new Response(bomb.slice()));
  server.routes.set("/endless.txt", () =>
    new Response(
      new ReadableStream({
        pull(c) {
          c.enqueue(new TextEncoder().encode("192.0.2.1\n".repeat(10_000)));
        },
      }),
    ));
  server.routes.set("/truncated.mmdb", () => new Response(new Uint8Array(4096).fill(0xab)));
  server.routes.set("/stalled.txt", () =>
    new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode("192.0.2.1\n"));
          stalled.signal.addEventListener("abort", () => {
            try {
              c.close();
            } catch { /* cancelled by the client already */ }
          });
        },
      }),
    ));
  const cases = [
    {
      name: "bomb",
      spec: { kind: "isp", format: "mmdb.gz", path: "/bomb.mmdb.gz", maxUnpackedMB: 50 },
      reason: /unpacked exceeds the cap of 50 MB/,
      sent: "1 GB unpacked",
    },
    {
      name: "endless",
      spec: { kind: "threat", format: "ip-list", path: "/endless.txt", maxDownloadMB: 20 },
      reason: /download exceeds the cap of 20 MB/,
      sent: "an endless body",
    },
    {
      name: "truncated",
      spec: { kind: "domain", format: "mmdb", path: "/truncated.mmdb" },
      reason: /Not a valid MaxMind DB|Invalid MaxMind DB/,
      sent: "4 kB that are no database",
    },
    {
      name: "stalled",
      spec: { kind: "vpn", format: "ip-list", path: "/stalled.txt" },
      reason: /timed out: nothing received for 2000 ms/,
      sent: "a body that stops sending",
    },
  ];
  try {
    const dataDir = `${dir}/data`;
    await Deno.mkdir(dataDir);
    const base = await server.sourcesFile(dir);
    const env = cliEnv(dataDir, base);
    assert.equal((await runCli(["data", "update"], env)).code, 0);
    const figures: string[] = [];
    for (const c of cases) {
      const { path, ...spec } = c.spec;
      await server.sourcesFile(dir, [{
        name: c.name,
        url: `${server.url}${path}`,
        license: "test",
        attribution: "test",
        ...spec,
      }]);
      const child = spawnCli(["data", "update"], env);
      let peak = 0;
      const sampler = setInterval(() => peak = Math.max(peak, peakMb(child.pid) ?? 0), 20);
      const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
      const out = await child.output();
      clearTimeout(timer);
      clearInterval(sampler);
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 1, stderr);
      assert.match(stderr, new RegExp(`update: ${c.name}: FAILED: .*${c.reason.source}`), stderr);
      assert.deepEqual(await manifestProblems(dataDir), []);
      const lookup = await runCli(["lookup", "8.8.8.8", "--get", "asn_number"], env);
      assert.equal(JSON.parse(lookup.stdout).asn_number, 15169, "the installed data stays");
      // The cap bounds memory: far below a bomb's gigabyte (the runtime itself is ~100 MB).
      if (peak > 0) assert.ok(peak < 400, `${c.name}: peak ${peak} MB`);
      figures.push(
        `${c.name} (${c.sent}): refused, peak ${peak ? `${peak.toFixed(0)} MB` : "n/a"}`,
      );
    }
    stalled.abort();
    console.log(`data hostile sources: ${figures.join("; ")}`);
  } finally {
    stalled.abort();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
