/**
 * Start-up and memory of `ipintel serve` on the default data: the time from
 * spawning the process to its first 200 on `GET /ip/8.8.8.8` (what a user or
 * an orchestrator sees as "ready"), and its resident memory (VmRSS, workers
 * included: they are threads) once ready and after serving 10,000 distinct
 * addresses under load. One process and all workers (IPINTEL_WORKERS unset:
 * one per CPU). Goals: ready within 1 s; ≤ 300 MB resident with all workers.
 *
 * Run: `deno task bench:startup`. Environment: BENCH_STARTS (5) starts per
 * mode, BENCH_LOAD_SECONDS (5) of load before the second memory reading.
 *
 * @module
 */

import { knownAddresses } from "./_addresses.ts";
import { DATA_DIR, envInt, machineLoad, median, rssMb, startServer } from "./_serve.ts";

const STARTS = envInt("BENCH_STARTS", 5);
const LOAD_SECONDS = envInt("BENCH_LOAD_SECONDS", 5);
const CONCURRENCY = 16;

const addresses = await knownAddresses(DATA_DIR, 10_000, 3);

/** Requests distinct addresses from CONCURRENCY loops for `seconds`; returns how many answered 200. */
async function load(port: number, seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let next = 0;
  let ok = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) {
      const ip = addresses[next++ % addresses.length];
      const response = await fetch(`http://127.0.0.1:${port}/ip/${ip}`);
      await response.arrayBuffer();
      if (response.status === 200) ok++;
    }
  }));
  return ok;
}

const workers = navigator.hardwareConcurrency;
const modes: [string, string[]][] = [
  ["one process", ["--workers", "1"]],
  [`all workers (${workers})`, []],
];
const dir = await Deno.makeTempDir({ prefix: "ipintel-startup-bench-" });
try {
  console.log(`${STARTS} starts per mode; load: ${CONCURRENCY} clients for ${LOAD_SECONDS} s`);
  console.log(
    "| mode | ready, median ms (max) | RSS when ready, MB | RSS after load, MB | other load (cores) |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const [mode, options] of modes) {
    const ready: number[] = [];
    const idle: number[] = [];
    const loaded: number[] = [];
    const { cores } = await machineLoad(async () => {
      for (let i = 0; i < STARTS; i++) {
        const server = await startServer(dir, ["--log", "off", ...options]);
        try {
          ready.push(server.readyMs);
          idle.push(rssMb(server.child.pid));
          if ((await load(server.port, LOAD_SECONDS)) === 0) throw new Error("no request answered");
          loaded.push(rssMb(server.child.pid));
        } finally {
          await server.stop();
        }
      }
    });
    console.log(
      `| ${mode} | ${median(ready).toFixed(0)} (${Math.max(...ready).toFixed(0)}) | ${
        median(idle).toFixed(0)
      } | ${median(loaded).toFixed(0)} | ${
        cores.toFixed(2)
      } (this bench and its server included) |`,
    );
  }
  console.log("goals: ready ≤ 1000 ms; RSS ≤ 300 MB with all workers");
} finally {
  await Deno.remove(dir, { recursive: true });
}
