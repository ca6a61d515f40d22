/**
 * HTTP throughput of ipintel's `GET /ip/{ip}` as a share of the ceiling (a
 * bare `Deno.serve` with a fixed ~600-byte JSON body, bench/ceiling_server.ts),
 * without a key (auth off) and with one (auth required, a key whose limit is
 * never reached: every request authenticated and counted).
 *
 * Run: `deno task bench:http` (deno run --allow-all bench/http_bench.ts).
 *
 * Starts both servers as subprocesses on free ports, writes a wrk Lua script
 * cycling through 10,000 random public addresses (bench/_addresses.ts, only
 * ones the City database knows), warms both up (checking ipintel answers 200),
 * then brackets: ceiling, ipintel, ceiling, keyed, ceiling, ... Each run is
 * divided by the mean of the two ceiling runs around it (machine speed drifts
 * within minutes; see the design notes on measuring); the median of those
 * ratios is the figure. Goals: ipintel ≥ 0.6; keyed ≥ 0.9 of ipintel in the
 * same round.
 *
 * Each round also shows the "other load": cores used during each run by
 * processes other than this bench, wrk and the server under test (from
 * /proc). Runs above 0.2 cores are marked "!": sharing the machine changes
 * the ratio (it tends to flatter ipintel), so such rounds deserve a re-run.
 *
 * Environment (all optional):
 *   BENCH_SECONDS      seconds per measured run (10)
 *   BENCH_ROUNDS       ipintel runs (5); ceiling runs are one more
 *   BENCH_WARMUP       warm-up seconds per server (5)
 *   BENCH_THREADS      wrk threads (1)
 *   BENCH_CONNECTIONS  wrk connections (32)
 *   BENCH_ADDRESSES    distinct addresses cycled (10000)
 *   IPINTEL_DATA_DIR   data directory (./data)
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { readManifest } from "../src/sources/manifest.ts";
import { randomPublicAddresses } from "./_addresses.ts";
import { freePort, spawnDeno } from "./_serve.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const DATA_DIR = Deno.env.get("IPINTEL_DATA_DIR") ?? `${ROOT}data`;

function envInt(name: string, fallback: number): number {
  const text = Deno.env.get(name);
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

const SECONDS = envInt("BENCH_SECONDS", 10);
const ROUNDS = envInt("BENCH_ROUNDS", 5);
const WARMUP = envInt("BENCH_WARMUP", 5);
const THREADS = envInt("BENCH_THREADS", 1);
const CONNECTIONS = envInt("BENCH_CONNECTIONS", 32);
const ADDRESSES = envInt("BENCH_ADDRESSES", 10_000);

/** A started server: its port, process and the tail of its stderr. */
interface Server {
  name: string;
  port: number;
  child: Deno.ChildProcess;
  stderrTail: () => string;
}

const servers: Server[] = [];

function start(name: string, args: string[], port: number): Server {
  const { child, stderrTail } = spawnDeno(args);
  const server = { name, port, child, stderrTail };
  servers.push(server);
  return server;
}

async function stopAll(): Promise<void> {
  for (const server of servers.splice(0)) {
    try {
      server.child.kill("SIGTERM");
    } catch {
      // already exited
    }
    await server.child.status.catch(() => {});
  }
}

/** Waits until `url` answers 200, failing early if the process exits. */
async function waitFor(server: Server, path: string, timeoutMs: number): Promise<void> {
  const url = `http://127.0.0.1:${server.port}${path}`;
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  server.child.status.then(() => exited = true);
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`${server.name} exited before answering; stderr:\n${server.stderrTail()}`);
    }
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${server.name} did not answer 200 on ${url} within ${timeoutMs} ms`);
}

/** CPU clock ticks (USER_HZ) so far, from /proc: the machine's busy time, a process's own time. */
interface CpuTicks {
  machineBusy: number;
  server: number;
  /** This process and its reaped children (wrk, once awaited). */
  self: number;
}

const TICKS_PER_SECOND = 100;

function readCpuTicks(serverPid: number): CpuTicks | null {
  try {
    // cpu  user nice system idle iowait irq softirq steal ...
    const cpu = Deno.readTextFileSync("/proc/stat").split("\n", 1)[0]!.trim().split(/\s+/);
    const field = (i: number) => Number(cpu[i] ?? 0);
    const machineBusy = field(1) + field(2) + field(3) + field(6) + field(7);
    // Fields after the ")" that closes the command name: utime is the 12th, then stime, cutime, cstime.
    const times = (pid: number | "self", withChildren: boolean) => {
      const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const f = text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number);
      const own = (f[11] ?? 0) + (f[12] ?? 0);
      return withChildren ? own + (f[13] ?? 0) + (f[14] ?? 0) : own;
    };
    return { machineBusy, server: times(serverPid, false), self: times("self", true) };
  } catch {
    return null; // not Linux, or the process is gone
  }
}

/** Cores used by everything except this bench, wrk and the server under test, during a run. */
function otherLoad(
  before: CpuTicks | null,
  after: CpuTicks | null,
  seconds: number,
): number | null {
  if (!before || !after) return null;
  const others = (after.machineBusy - before.machineBusy) - (after.server - before.server) -
    (after.self - before.self);
  return Math.max(0, others / TICKS_PER_SECOND / seconds);
}

/** Above this many cores of other load, a run is flagged: it did not have the machine to itself. */
const OTHER_LOAD_LIMIT = 0.2;

/** What one wrk run reports. */
interface WrkResult {
  requestsPerSecond: number;
  /** Cores used by other processes during the run (null when /proc is not readable). */
  otherLoad: number | null;
  requests: number;
  non2xx: number;
  socketErrors: string | null;
  statusLine: string | null;
  output: string;
}

async function wrk(server: Server, script: string, seconds: number): Promise<WrkResult> {
  const port = server.port;
  const before = readCpuTicks(server.child.pid);
  const started = performance.now();
  const { code, stdout, stderr } = await new Deno.Command("wrk", {
    args: [
      `-t${THREADS}`,
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      "-s",
      script,
      `http://127.0.0.1:${port}`,
    ],
    stdin: "null",
  }).output();
  const load = otherLoad(
    before,
    readCpuTicks(server.child.pid),
    (performance.now() - started) / 1000,
  );
  const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`wrk failed (exit ${code}):\n${output}`);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  const total = /(\d+) requests in/.exec(output);
  if (!rps || !total) throw new Error(`cannot read wrk output:\n${output}`);
  return {
    requestsPerSecond: Number(rps[1]),
    otherLoad: load,
    requests: Number(total[1]),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0),
    socketErrors: /Socket errors:.*/.exec(output)?.[0] ?? null,
    statusLine: /^STATUS .*/m.exec(output)?.[0] ?? null,
    output,
  };
}

/**
 * The wrk script: requests cycle through `addresses` (each thread from its own
 * offset), pre-formatted once per thread so Lua costs little per request.
 * With `countStatuses`, a response hook counts 200s and others and `done`
 * prints them as a STATUS line (it costs wrk CPU, so it is used for the
 * warm-up check only, not for measured runs).
 */
function luaScript(
  addresses: readonly string[],
  countStatuses: boolean,
  headers: Record<string, string> = {},
): string {
  const luaHeaders = Object.entries(headers).map(([k, v]) => `["${k}"]="${v}"`).join(", ");
  const table = addresses.map((ip) => `"${ip}"`).join(",\n");
  const counting = `
function response(status, headers, body)
  if status == 200 then ok = ok + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local o, x = 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); x = x + t:get("other") end
  io.write(string.format("STATUS 200=%d other=%d\\n", o, x))
end
`;
  return `-- Generated by bench/http_bench.ts
local addresses = {
${table}
}
threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end
function init(args)
  ok, other = 0, 0
  requests = {}
  for i, ip in ipairs(addresses) do requests[i] = wrk.format("GET", "/ip/" .. ip, {${luaHeaders}}) end
  counter = ((id or 1) - 1) * 1237
end
function request()
  counter = counter % #requests + 1
  return requests[counter]
end
${countStatuses ? counting : ""}`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const fmt = (n: number) => n.toFixed(0).padStart(8);

async function main(): Promise<void> {
  const manifest = await readManifest(DATA_DIR);
  const cityEntry = manifest?.sources.find((s) => s.kind === "city");
  if (!cityEntry) throw new Error(`No City database in ${DATA_DIR}: run "deno task data"`);
  const cityBytes = await Deno.readFile(`${DATA_DIR}/${cityEntry.file}`);
  const city = new Reader(Buffer.from(cityBytes.buffer, cityBytes.byteOffset, cityBytes.length));
  const addresses = randomPublicAddresses(ADDRESSES, 1, { keep: (ip) => city.get(ip) !== null });

  const dir = await Deno.makeTempDir({ prefix: "ipintel-http-bench-" });
  // The keyed variant: a server with auth required, on its own KV, and a key whose limit
  // (a billion per minute) is never reached, so every request is authenticated and counted.
  const kv = `${dir}/bench.kv`;
  const key = await createBenchKey(kv);
  const scripts = {
    plain: `${dir}/plain.lua`,
    keyed: `${dir}/keyed.lua`,
    plainCheck: `${dir}/plain_check.lua`,
    keyedCheck: `${dir}/keyed_check.lua`,
  };
  await Deno.writeTextFile(scripts.plain, luaScript(addresses, false));
  await Deno.writeTextFile(scripts.plainCheck, luaScript(addresses, true));
  await Deno.writeTextFile(scripts.keyed, luaScript(addresses, false, { "X-API-Key": key }));
  await Deno.writeTextFile(scripts.keyedCheck, luaScript(addresses, true, { "X-API-Key": key }));

  try {
    const ceilingPort = freePort();
    const ceiling = start("ceiling", [
      "run",
      "--allow-net",
      "bench/ceiling_server.ts",
      "--port",
      String(ceilingPort),
      "--host",
      "127.0.0.1",
    ], ceilingPort);
    const serve = (name: string, options: string[]) => {
      const port = freePort();
      const args = ["run", "-A", "main.ts", "serve", "--port", String(port), "--host", "127.0.0.1"];
      return start(name, [...args, "--data-dir", DATA_DIR, ...options], port);
    };
    const plain = serve("ipintel", ["--auth", "off", "--kv", ":memory:"]);
    const keyed = serve("keyed", ["--auth", "required", "--kv", kv]);
    await waitFor(ceiling, "/", 30_000);
    await waitFor(plain, "/ready", 120_000);
    await waitFor(keyed, "/ready", 120_000);

    /** What is measured: a server and the script that loads it. */
    const variants = [
      { label: "ipintel", server: plain, script: scripts.plain, check: scripts.plainCheck },
      { label: "keyed", server: keyed, script: scripts.keyed, check: scripts.keyedCheck },
    ];
    console.log(
      `wrk -t${THREADS} -c${CONNECTIONS}, ${SECONDS} s per run, ${ROUNDS} rounds, ` +
        `${addresses.length} addresses (GET /ip/{ip}; keyed: with X-API-Key, limit never reached)`,
    );
    console.log(`warm-up: ${WARMUP} s each`);
    for (
      const { server, script } of [
        { server: ceiling, script: scripts.plainCheck },
        ...variants.map((v) => ({ server: v.server, script: v.check })),
      ]
    ) {
      const result = await wrk(server, script, WARMUP);
      console.log(
        `  ${server.name.padEnd(8)} ${fmt(result.requestsPerSecond)} req/s  ${
          result.statusLine ?? ""
        }`,
      );
      const bad = /other=(\d+)/.exec(result.statusLine ?? "");
      if (!bad || Number(bad[1]) > 0 || result.non2xx > 0) {
        throw new Error(`${server.name} answered non-200s during warm-up:\n${result.output}`);
      }
    }

    const ratios = new Map(variants.map((v) => [v.label, [] as number[]]));
    const keyedShare: number[] = [];
    let non2xx = 0;
    let loaded = false;
    const errors: string[] = [];
    const run = async (server: Server, script: string) => {
      const result = await wrk(server, script, SECONDS);
      if (server !== ceiling) non2xx += result.non2xx;
      if (result.socketErrors) errors.push(`${server.name}: ${result.socketErrors}`);
      if (result.non2xx > 0) errors.push(`${server.name}: Non-2xx or 3xx: ${result.non2xx}`);
      if (result.otherLoad !== null && result.otherLoad > OTHER_LOAD_LIMIT) loaded = true;
      return { rps: result.requestsPerSecond, load: result.otherLoad };
    };
    const loadText = (load: number | null) =>
      load === null ? "  n/a" : `${load.toFixed(2)}${load > OTHER_LOAD_LIMIT ? "!" : ""}`;
    console.log(
      "round  variant    ceiling   variant   ceiling    ratio   other load (cores) c / v / c",
    );
    // Every measurement sits between two ceiling runs: c, ipintel, c, keyed, c, ipintel, ...
    let before = await run(ceiling, scripts.plain);
    for (let round = 1; round <= ROUNDS; round++) {
      const roundRatios = new Map<string, number>();
      for (const variant of variants) {
        const own = await run(variant.server, variant.script);
        const after = await run(ceiling, scripts.plain);
        const ratio = own.rps / ((before.rps + after.rps) / 2);
        ratios.get(variant.label)!.push(ratio);
        roundRatios.set(variant.label, ratio);
        console.log(
          `${String(round).padStart(5)}  ${variant.label.padEnd(8)} ${fmt(before.rps)}  ${
            fmt(own.rps)
          }  ${fmt(after.rps)}    ${ratio.toFixed(3)}   ${loadText(before.load)} / ${
            loadText(own.load)
          } / ${loadText(after.load)}`,
        );
        before = after;
      }
      keyedShare.push(roundRatios.get("keyed")! / roundRatios.get("ipintel")!);
    }
    console.log(
      `median ratio ipintel / ceiling: ${median(ratios.get("ipintel")!).toFixed(3)} (goal ≥ 0.6)`,
    );
    console.log(`median ratio keyed / ceiling: ${median(ratios.get("keyed")!).toFixed(3)}`);
    console.log(
      `median keyed / unkeyed (same round): ${median(keyedShare).toFixed(3)} (goal ≥ 0.9)`,
    );
    console.log(
      `non-2xx responses in measured runs: ${non2xx}` +
        (errors.length ? `\nwrk reported: ${errors.join("; ")}` : ""),
    );
    if (loaded) {
      console.log(
        `warning: runs marked ! had more than ${OTHER_LOAD_LIMIT} cores of other load ` +
          "(processes outside this bench); their ratios are less trustworthy",
      );
    }
    console.log(
      `note: wrk (${THREADS} thread(s)) shares the machine's ${navigator.hardwareConcurrency} ` +
        "cores with the server it loads; every server is a single Deno process.",
    );
    if (non2xx > 0) throw new Error("ipintel answered non-2xx responses during the measurement");
  } finally {
    await stopAll();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Creates an API key with a limit that is never reached, through the CLI as an operator would. */
async function createBenchKey(kv: string): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "keys", "create", "--name", "bench", "--limit", "1000000000"]
      .concat(["--json", "--kv", kv, "--data-dir", DATA_DIR]),
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) throw new Error(new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout)).key;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    stopAll().finally(() => Deno.exit(130));
  });
}

try {
  await main();
} catch (error) {
  await stopAll();
  console.error(error instanceof Error ? error.message : error);
  Deno.exit(1);
}
