/**
 * What hostile user agents cost the server's memory: 6,000 `GET /ip/8.8.8.8?get=browser`, each
 * with its own 30 KB `User-Agent`, against a real `ipintel serve` (all workers, one per CPU),
 * reading its resident memory (VmRSS, workers included: they are threads) before, right after
 * and 20 s after. The answer cache and the user-agent cache are keyed by client text: neither
 * may hold more than its bound in memory (goal: a rise of at most 110 MB with the answer cache
 * on; bench/README.md, "Hostile user agents", and docs/design.md, "Caching, bounded").
 *
 * Run: `deno task bench:ua-memory`. Environment: BENCH_UA_REQUESTS (6000), BENCH_UA_BYTES (30000).
 *
 * @module
 */

import { envInt, machineLoad, rssMb, startServer } from "./_serve.ts";

const REQUESTS = envInt("BENCH_UA_REQUESTS", 6000);
const UA_BYTES = envInt("BENCH_UA_BYTES", 30_000);
const CONCURRENCY = 8;
const SETTLE_MS = 20_000;

/** A distinct user agent of UA_BYTES characters: a real browser's, then junk. */
function hostileAgent(i: number): string {
  const head = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) ` +
    `Chrome/120.0.${i}.0 Safari/537.36 `;
  const junk = crypto.randomUUID().replaceAll("-", "");
  return (head + junk.repeat(Math.ceil(UA_BYTES / junk.length))).slice(0, UA_BYTES);
}

async function send(port: number, count: number, agent: (i: number) => string): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count) {
      const i = next++;
      const response = await fetch(`http://127.0.0.1:${port}/ip/8.8.8.8?get=browser`, {
        headers: { "user-agent": agent(i) },
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`request ${i}: ${response.status}`);
    }
  }));
}

const modes: [string, string[]][] = [
  ["answer cache on (default)", []],
  ["answer cache off", ["--answer-cache", "0"]],
];
const dir = await Deno.makeTempDir({ prefix: "ipintel-ua-memory-" });
try {
  console.log(
    `${REQUESTS} requests, each with its own ${UA_BYTES}-byte user agent, ` +
      `${CONCURRENCY} at a time; all workers (${navigator.hardwareConcurrency})`,
  );
  console.log(
    "| mode | RSS before, MB | right after | 20 s after | rise after 20 s | other load (cores) |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const [mode, options] of modes) {
    const server = await startServer(dir, ["--log", "off", ...options]);
    try {
      const pid = server.child.pid;
      // Warm: code compiled, caches of the data in use, as a server that has run a while.
      await send(server.port, 500, () => "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0");
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const before = rssMb(pid);
      const { value: [after, settled], cores } = await machineLoad(async () => {
        await send(server.port, REQUESTS, hostileAgent);
        const after = rssMb(pid);
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        return [after, rssMb(pid)];
      });
      console.log(
        `| ${mode} | ${before.toFixed(0)} | ${after.toFixed(0)} | ${settled.toFixed(0)} | ` +
          `${(settled - before).toFixed(0)} | ${cores.toFixed(2)} |`,
      );
    } finally {
      await server.stop();
    }
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
