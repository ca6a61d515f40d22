/**
 * `POST /bulk` with 1000 addresses the City database knows: the time to the
 * last byte of the answer, measured by the client over loopback (so it
 * includes sending about 1 MB of JSON), cold (the first request after the
 * server is ready) and warm (the same request again). Goals: warm ≤ 10 ms,
 * cold ≤ 50 ms.
 *
 * Run: `deno task bench:bulk`. The server is started BENCH_STARTS times (5); the cold figure is the median
 * of those first requests, the warm one the median of BENCH_REPEATS (20)
 * requests per start. Other load on the machine is reported alongside.
 *
 * @module
 */

import { DATA_DIR, envInt, machineLoad, median, startServer } from "./_serve.ts";
import { knownAddresses } from "./_addresses.ts";

const STARTS = envInt("BENCH_STARTS", 5);
const REPEATS = envInt("BENCH_REPEATS", 20);
const COUNT = 1000;

const addresses = await knownAddresses(DATA_DIR, COUNT, 7);
const body = JSON.stringify({ ips: addresses });

/** One POST /bulk, timed to the last byte; fails unless all 1000 items are results. */
async function bulk(port: number, query = ""): Promise<number> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/bulk${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`POST /bulk answered ${response.status}: ${text}`);
  if (query === "") {
    const items = JSON.parse(text).data.responseArray as { error?: unknown }[];
    if (items.length !== COUNT || items.some((item) => item.error)) {
      throw new Error("POST /bulk did not answer every address");
    }
  }
  return elapsed;
}

const dir = await Deno.makeTempDir({ prefix: "ipintel-bulk-bench-" });
try {
  console.log(
    `POST /bulk with ${COUNT} known addresses; ${STARTS} starts per mode, ${REPEATS} warm requests each`,
  );
  console.log(
    "| mode | cold (first request), median ms | warm, median ms | warm p90 ms | other load (cores) |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: |");
  const modes: [string, string[]][] = [
    ["one process", ["--workers", "1"]],
    [`all workers (${navigator.hardwareConcurrency})`, []],
  ];
  for (const [mode, options] of modes) {
    const cold: number[] = [];
    const warm: number[] = [];
    const { cores } = await machineLoad(async () => {
      for (let i = 0; i < STARTS; i++) {
        const server = await startServer(dir, [...options]);
        try {
          cold.push(await bulk(server.port));
          for (let j = 0; j < REPEATS; j++) warm.push(await bulk(server.port));
        } finally {
          await server.stop();
        }
      }
    });
    const p90 = [...warm].sort((a, b) => a - b)[Math.floor(warm.length * 0.9)]!;
    console.log(
      `| ${mode} | ${median(cold).toFixed(1)} | ${median(warm).toFixed(1)} | ${p90.toFixed(1)} | ${
        cores.toFixed(2)
      } (this bench and its server included) |`,
    );
  }
  console.log("goals: warm ≤ 10 ms, cold ≤ 50 ms (client-side, loopback, about 1 MB of JSON)");
} finally {
  await Deno.remove(dir, { recursive: true });
}
