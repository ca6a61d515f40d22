/**
 * HTTP throughput of ipintel's `GET /ip/{ip}` as a share of the ceiling (a
 * bare `Deno.serve` with a fixed ~600-byte JSON body, bench/ceiling_server.ts),
 * in several variants, each its own server process:
 *
 * - `plain`: one process (IPINTEL_WORKERS=1), auth off, otherwise the defaults (metrics
 *   counted, errors-only log);
 * - `workers`: the same with the default workers (one per CPU) on one port;
 * - `parallel`: the same handler under `deno serve --parallel` (bench/serve_parallel.ts),
 *   the alternative to ipintel's workers the issue asked to measure;
 * - `uncounted`: the same with IPINTEL_METRICS=false, to price the counting;
 * - `keyed`: auth required, a key whose limit is never reached (every request
 *   authenticated and counted);
 * - `floor`, `floor-keyed`: not ipintel but the floor (bench/ceiling_server.ts
 *   --floor): a bare server that reads the target and headers and answers with
 *   ipintel's headers (the RateLimit ones too when keyed), so that the runtime's
 *   price of what the spec requires is told apart from ipintel's own work;
 * - `get`, `xml`, `csv`: `?get=...`, `?format=xml`, `?format=csv` on the plain server;
 * - `hono`: a Hono hello-world (bench/ceiling_server.ts --hono): the framework's own price;
 * - `hono-lookup`: one Hono route answering with ipintel's lookup and JSON writer and nothing
 *   else (bench/lookup_floor_server.ts): what any Hono app doing this lookup pays at the least,
 *   so that `plain` over it is the price of ipintel's request pipeline;
 * - `before`: `plain` as served by another checkout (BENCH_BEFORE: its directory), to
 *   compare a change with what it replaced in one run;
 * - `nginx`: not ipintel but the issue's moonshot: nginx with one worker and the GeoIP2 C module
 *   (libmaxminddb) on the same City and ASN databases, answering `GET /ip/{ip}` with a JSON body
 *   of the looked-up fields (bench/http_bench.ts `nginxConfig`). Its CPU is the whole nginx
 *   process tree (master + worker; the master is idle under load). Skipped, with a message,
 *   when nginx or the module is not installed (Debian: nginx-light, libnginx-mod-http-geoip2).
 *
 * Run: `deno task bench:http` (deno run --allow-all bench/http_bench.ts).
 *
 * Starts the servers as subprocesses on free ports, writes wrk Lua scripts
 * cycling through 10,000 random public addresses (bench/_addresses.ts, only
 * ones the City database knows), warms each up (checking it answers 200),
 * then brackets: ceiling, variant, ceiling, variant, ceiling, ... Each run is
 * divided by the mean of the two ceiling runs around it (machine speed drifts
 * within minutes; see the design notes on measuring); the median of those
 * ratios over the rounds is the figure (the ceiling is one process: `workers`
 * is compared with what one bare process does). Ratios between variants (keyed/plain,
 * plain/uncounted, xml/plain) are taken within a round, then the median.
 * Latency percentiles (p50, p99) are wrk's, medians over the rounds. CPU
 * µs/request is the server process's CPU time (all threads, from /proc) over
 * the requests it answered: steadier than throughput on a shared machine,
 * and the per-request cost that workers cannot change. "CPU × ceiling" is it
 * over the mean of the two ceiling runs around it, the median over the rounds
 * (issue 31's acceptance figure).
 *
 * Each run also shows the "other load": cores used during the run by
 * processes other than this bench, wrk and the server under test (from
 * /proc). Runs above 0.2 cores are marked "!": sharing the machine changes
 * the ratio (it tends to flatter ipintel), so such rounds deserve a re-run.
 *
 * Environment (all optional):
 *   BENCH_SECONDS      seconds per measured run (10)
 *   BENCH_ROUNDS       rounds (5); each runs every variant once
 *   BENCH_WARMUP       warm-up seconds per server (5)
 *   BENCH_THREADS      wrk threads (2)
 *   BENCH_CONNECTIONS  wrk connections (64)
 *   BENCH_ADDRESSES    distinct addresses cycled (10000)
 *   BENCH_VARIANTS     comma-separated variants to run (all)
 *   BENCH_BEFORE       a checkout to serve as the `before` variant (absent: no such variant)
 *   BENCH_BEFORE_DATA_DIR  the `before` variant's data directory (IPINTEL_DATA_DIR): the same
 *                      code over other data (crawler sources installed, say) with BENCH_BEFORE=.
 *   IPINTEL_DATA_DIR   data directory (./data)
 *   BENCH_NGINX        the nginx binary (nginx on PATH, else /usr/sbin/nginx)
 *   BENCH_NGINX_GEOIP2 the module (/usr/lib/nginx/modules/ngx_http_geoip2_module.so)
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { type CityResponse, Reader } from "mmdb-lib";
import { knownAddresses } from "./_addresses.ts";
import { seededRandom } from "../tests/_random.ts";
import { drainStderr, freePort, serveArgs, SERVER_V8_FLAGS, spawnDeno } from "./_serve.ts";
import { readManifest } from "../src/data/sources/manifest.ts";

export const ROOT = new URL("..", import.meta.url).pathname;
export const DATA_DIR = Deno.env.get("IPINTEL_DATA_DIR") ?? `${ROOT}data`;

function envInt(name: string, fallback: number): number {
  const text = Deno.env.get(name);
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

export const SECONDS = envInt("BENCH_SECONDS", 10);
const ROUNDS = envInt("BENCH_ROUNDS", 5);
export const WARMUP = envInt("BENCH_WARMUP", 5);
export const THREADS = envInt("BENCH_THREADS", 2);
export const CONNECTIONS = envInt("BENCH_CONNECTIONS", 64);
const BEFORE = Deno.env.get("BENCH_BEFORE") ?? null;
const BEFORE_DATA_DIR = Deno.env.get("BENCH_BEFORE_DATA_DIR") ?? null;
export const ADDRESSES = envInt("BENCH_ADDRESSES", 10_000);
const ONLY = Deno.env.get("BENCH_VARIANTS")?.split(",").filter((v) => v !== "") ?? null;
/** The address mix (see requestAddresses): known (cycled), zipf or unique. */
const MIX = Deno.env.get("BENCH_MIX") ?? "known";
/** Requests of the zipf and unique mixes, and the zipf mix's distinct addresses. */
const MIX_REQUESTS = envInt("BENCH_MIX_REQUESTS", 1_000_000);
const ZIPF_ADDRESSES = envInt("BENCH_ZIPF_ADDRESSES", 200_000);

/** A started server: its port, process and the tail of its stderr. */
export interface Server {
  name: string;
  port: number;
  child: Deno.ChildProcess;
  stderrTail: () => string;
  /** Its CPU counts its child processes too (nginx's worker); a Deno server is one process. */
  tree?: boolean;
}

const servers: Server[] = [];

function start(name: string, args: string[], port: number): Server {
  const { child, stderrTail } = spawnDeno(args);
  const server = { name, port, child, stderrTail };
  servers.push(server);
  return server;
}

/** Starts a server that is not Deno (nginx), stderr drained and its tail kept, as spawnDeno does. */
function startCommand(name: string, command: string, args: string[], port: number): Server {
  const child = new Deno.Command(command, { args, stdin: "null", stdout: "null", stderr: "piped" })
    .spawn();
  const server = { name, port, child, stderrTail: drainStderr(child), tree: true };
  servers.push(server);
  return server;
}

/** The wrk runs under way, stopped with the servers when the bench is interrupted. */
const loads = new Set<Deno.ChildProcess>();

export async function stopAll(): Promise<void> {
  for (const load of loads) {
    try {
      load.kill("SIGTERM");
    } catch {
      // already exited
    }
  }
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
export async function waitFor(server: Server, path: string, timeoutMs: number): Promise<void> {
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

export const TICKS_PER_SECOND = 100;

/** User + system ticks of a process (its threads included), from /proc/PID/stat. */
function processTicks(pid: number | "self", withChildren: boolean): number {
  const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the ")" that closes the command name: utime is the 12th, then stime, cutime, cstime.
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number);
  const own = (f[11] ?? 0) + (f[12] ?? 0);
  return withChildren ? own + (f[13] ?? 0) + (f[14] ?? 0) : own;
}

/** The live child processes of `pid` (nginx's worker), from the parent field of /proc/N/stat. */
function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const text = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry.name));
    } catch {
      // exited while listing
    }
  }
  return children;
}

/** CPU ticks of a server: its own process, plus its live children when it is a process tree. */
function serverTicks(server: Server): number {
  const pid = server.child.pid;
  let ticks = processTicks(pid, false);
  if (server.tree) {
    for (const child of childPids(pid)) {
      try {
        ticks += processTicks(child, false);
      } catch {
        // exited between listing and reading
      }
    }
  }
  return ticks;
}

export function readCpuTicks(server: Server): CpuTicks | null {
  try {
    // cpu  user nice system idle iowait irq softirq steal ...
    const cpu = Deno.readTextFileSync("/proc/stat").split("\n", 1)[0]!.trim().split(/\s+/);
    const field = (i: number) => Number(cpu[i] ?? 0);
    const machineBusy = field(1) + field(2) + field(3) + field(6) + field(7);
    return { machineBusy, server: serverTicks(server), self: processTicks("self", true) };
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
export interface WrkResult {
  requestsPerSecond: number;
  /** Cores used by other processes during the run (null when /proc is not readable). */
  otherLoad: number | null;
  requests: number;
  non2xx: number;
  socketErrors: string | null;
  statusLine: string | null;
  /** CPU time the server process used per request (all its threads), in µs. */
  cpuUs: number | null;
  /** wrk's latency percentiles, in ms. */
  p50: number | null;
  p99: number | null;
  output: string;
}

/** A wrk latency like "1.23ms", "850.00us" or "1.02s", in ms. */
function latencyMs(output: string, percentile: string): number | null {
  const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, "m").exec(output);
  if (!match) return null;
  const scale = match[2] === "us" ? 0.001 : match[2] === "s" ? 1000 : 1;
  return Number(match[1]) * scale;
}

export async function wrk(
  server: Server,
  script: string,
  seconds: number,
): Promise<WrkResult> {
  const port = server.port;
  const before = readCpuTicks(server);
  const started = performance.now();
  const child = new Deno.Command("wrk", {
    args: [
      `-t${THREADS}`,
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      "--latency",
      "-s",
      script,
      `http://127.0.0.1:${port}`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  loads.add(child);
  const { code, stdout, stderr } = await child.output().finally(() => loads.delete(child));
  const after = readCpuTicks(server);
  const load = otherLoad(before, after, (performance.now() - started) / 1000);
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
    cpuUs: before && after
      ? (after.server - before.server) * (1e6 / TICKS_PER_SECOND) / Number(total[1])
      : null,
    p50: latencyMs(output, "50"),
    p99: latencyMs(output, "99"),
    output,
  };
}

/**
 * The wrk script: each thread reads the request paths from `pathsFile` (one a
 * line) and formats them once, then sends them in order from its own offset;
 * a mix of a million requests is read, not written into the script. With
 * `countStatuses`, a response hook counts 200s and others and `done` prints
 * them as a STATUS line (it costs wrk CPU, so it is used for the warm-up check
 * only, not for measured runs).
 */
export function luaScript(
  pathsFile: string,
  countStatuses: boolean,
  headers: Record<string, string> = {},
): string {
  const luaHeaders = Object.entries(headers).map(([k, v]) => `["${k}"]="${v}"`).join(", ");
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
threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end
function init(args)
  ok, other = 0, 0
  requests = {}
  for line in io.lines("${pathsFile}") do
    requests[#requests + 1] = wrk.format("GET", line, {${luaHeaders}})
  end
  counter = ((id or 1) - 1) * math.floor(#requests / 2)
end
function request()
  counter = counter % #requests + 1
  return requests[counter]
end
${countStatuses ? counting : ""}`;
}

/**
 * The addresses requested, in order, by mix: `known`, BENCH_ADDRESSES
 * addresses the City database knows, cycled; `zipf`, BENCH_MIX_REQUESTS
 * requests drawn with Zipf's law (s = 1) over BENCH_ZIPF_ADDRESSES such
 * addresses (repeat visitors); `unique`, BENCH_MIX_REQUESTS distinct such
 * addresses. Seeded: the same sequence every run.
 */
async function requestAddresses(): Promise<string[]> {
  switch (MIX) {
    case "known":
      return await knownAddresses(DATA_DIR, ADDRESSES, 1);
    case "unique":
      return [...new Set(await knownAddresses(DATA_DIR, MIX_REQUESTS, 3))];
    case "zipf": {
      const population = await knownAddresses(DATA_DIR, ZIPF_ADDRESSES, 2);
      // The cumulative weights of ranks 1..n under 1/rank, then one binary search a request.
      const cumulative = new Float64Array(population.length);
      let sum = 0;
      for (let rank = 0; rank < population.length; rank++) cumulative[rank] = sum += 1 / (rank + 1);
      const random = seededRandom(4);
      const out: string[] = [];
      for (let i = 0; i < MIX_REQUESTS; i++) {
        const target = random() * sum;
        let lo = 0;
        let hi = population.length - 1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (cumulative[mid]! < target) lo = mid + 1;
          else hi = mid;
        }
        out.push(population[lo]!);
      }
      return out;
    }
    default:
      throw new Error(`Unknown BENCH_MIX ${JSON.stringify(MIX)}: expected known, zipf or unique`);
  }
}

/** Writes the request path of each address to `file`, one a line (what luaScript reads). */
export async function writePaths(
  file: string,
  addresses: readonly string[],
  path: (ip: string) => string = (ip) => `/ip/${ip}`,
): Promise<string> {
  await Deno.writeTextFile(file, addresses.map(path).join("\n") + "\n");
  return file;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const fmt = (n: number) => n.toFixed(0).padStart(8);

/** A measured configuration: the server that answers and the request it gets. */
interface Variant {
  label: string;
  server: Server;
  /** Headers and query string of each request. */
  headers?: Record<string, string>;
  query?: string;
  /** The request path for an address (default `/ip/{ip}` and the query). */
  path?: (ip: string) => string;
  what: string;
}

/** A figure derived within each round: `of` over `over` (variant labels), with its goal. */
const SHARES: { name: string; of: string; over: string; goal: number | null }[] = [
  { name: "plain / uncounted (cost of counting)", of: "plain", over: "uncounted", goal: 0.95 },
  { name: "keyed / plain", of: "keyed", over: "plain", goal: 0.9 },
  { name: "plain / floor (ipintel's own work)", of: "plain", over: "floor", goal: null },
  { name: "keyed / floor-keyed", of: "keyed", over: "floor-keyed", goal: null },
  {
    name: "floor-keyed / floor (the runtime's price of 3 headers)",
    of: "floor-keyed",
    over: "floor",
    goal: null,
  },
  {
    name: "plain / hono-lookup (ipintel's request pipeline)",
    of: "plain",
    over: "hono-lookup",
    goal: null,
  },
  { name: "workers / parallel", of: "workers", over: "parallel", goal: null },
  { name: "get / plain", of: "get", over: "plain", goal: null },
  { name: "xml / plain", of: "xml", over: "plain", goal: 0.5 },
  { name: "csv / plain", of: "csv", over: "plain", goal: null },
];

/** Goals for a variant's share of the ceiling. */
const GOALS: Record<string, number> = { plain: 0.65, workers: 0.9 };

async function main(): Promise<void> {
  const addresses = await requestAddresses();

  const dir = await Deno.makeTempDir({ prefix: "ipintel-http-bench-" });
  // The keyed variant: a server with auth required, on its own KV, and a key whose limit
  // (a billion per minute) is never reached, so every request is authenticated and counted.
  const kv = `${dir}/bench.kv`;
  const key = await createBenchKey(kv);
  const wanted = (label: string) => ONLY === null || ONLY.includes(label);

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
      // As `deno task start` runs it (its V8 flags): the server users run.
      const args = ["run", ...SERVER_V8_FLAGS, "-A", ...serveArgs(port)];
      return start(name, [...args, "--data-dir", DATA_DIR, ...options], port);
    };
    const floorPort = freePort();
    const floorServer = start("floor", [
      "run",
      "--allow-net",
      "bench/ceiling_server.ts",
      "--port",
      String(floorPort),
      "--host",
      "127.0.0.1",
      "--floor",
    ], floorPort);
    const open = ["--auth", "off", "--kv", ":memory:"];
    const plain = serve("plain", [...open, "--workers", "1"]);
    const all: Variant[] = [
      { label: "plain", server: plain, what: "GET /ip/{ip}, one process, auth off, defaults" },
      {
        label: "workers",
        server: serve("workers", open),
        what: `the same with the default workers (${navigator.hardwareConcurrency})`,
      },
      {
        label: "parallel",
        server: (() => {
          const port = freePort();
          return start("parallel", [
            "serve",
            "--parallel",
            "-A",
            "--port",
            String(port),
            "--host",
            "127.0.0.1",
            "bench/serve_parallel.ts",
          ], port);
        })(),
        what: "the same handler under deno serve --parallel (each isolate its own data)",
      },
      {
        label: "uncounted",
        server: serve("uncounted", [...open, "--workers", "1", "--metrics", "false"]),
        what: "the same with IPINTEL_METRICS=false",
      },
      {
        label: "keyed",
        server: serve("keyed", ["--auth", "required", "--kv", kv, "--workers", "1"]),
        headers: { "X-API-Key": key },
        what: "auth required, X-API-Key (limit never reached)",
      },
      {
        label: "floor",
        server: floorServer,
        what: "bare Deno.serve that reads the target and headers, answers with CORS (no lookup)",
      },
      {
        label: "floor-keyed",
        server: floorServer,
        headers: { "X-API-Key": key },
        what: "the floor with a key: adds the three RateLimit headers",
      },
      {
        label: "get",
        server: plain,
        query: "?get=ip,geoLocation.country,geoLocation.city,security",
        what: "?get=ip,geoLocation.country,geoLocation.city,security",
      },
      { label: "xml", server: plain, query: "?format=xml", what: "?format=xml" },
      { label: "csv", server: plain, query: "?format=csv", what: "?format=csv" },
      {
        label: "hono",
        server: (() => {
          const port = freePort();
          const args = ["run", "--allow-net", "bench/ceiling_server.ts", "--hono"];
          return start("hono", [...args, "--port", String(port), "--host", "127.0.0.1"], port);
        })(),
        what: "a Hono hello-world: the same body from one Hono route (no lookup)",
      },
      {
        label: "hono-lookup",
        server: (() => {
          const port = freePort();
          const args = ["run", ...SERVER_V8_FLAGS, "-A", "bench/lookup_floor_server.ts"];
          return start(
            "hono-lookup",
            [...args, "--port", String(port), "--host", "127.0.0.1"],
            port,
          );
        })(),
        what: "one Hono route: ipintel's lookup and JSON answer, no pipeline (the lookup's floor)",
      },
      ...(BEFORE === null ? [] : [{
        label: "before",
        server: (() => {
          const port = freePort();
          const config = `${BEFORE}/deno.json`;
          const args = ["run", ...SERVER_V8_FLAGS, "-A", "--config", config, `${BEFORE}/main.ts`];
          const options = [
            "--port",
            String(port),
            "--host",
            "127.0.0.1",
            ...open,
            "--workers",
            "1",
          ];
          const data = BEFORE_DATA_DIR ?? DATA_DIR;
          return start("before", [...args, "serve", ...options, "--data-dir", data], port);
        })(),
        what: `plain, as the checkout in ${BEFORE} serves it` +
          (BEFORE_DATA_DIR ? ` from ${BEFORE_DATA_DIR}` : ""),
      }]),
    ];
    const nginx = wanted("nginx") ? await startNginx(dir) : null;
    if (nginx) {
      all.push({
        label: "nginx",
        server: nginx,
        what:
          "nginx, 1 worker, GeoIP2 module on the same City and ASN databases (CPU: master+worker)",
      });
    }
    const echoip = wanted("echoip") ? await startEchoip(dir) : null;
    if (echoip) {
      all.push({
        label: "echoip",
        server: echoip,
        path: (ip) => `/json?ip=${ip}`,
        what: "echoip (Go, geoip2-golang), GET /json?ip= on the same City and ASN databases",
      });
    }
    const variants = all.filter((v) => wanted(v.label));
    // Servers no wanted variant uses are stopped at once.
    for (const server of servers.splice(0)) {
      if (server === ceiling || variants.some((v) => v.server === server)) servers.push(server);
      else server.child.kill("SIGTERM");
    }
    await waitFor(ceiling, "/", 30_000);
    for (const server of new Set(variants.map((v) => v.server))) {
      await waitFor(server, server === echoip ? "/json?ip=8.8.8.8" : "/ready", 120_000);
    }
    if (nginx) await checkNginxAnswers(nginx, addresses.slice(0, 200));
    const scripts = new Map<string, { measure: string; check: string }>();
    const pathsOf = (name: string, path: (ip: string) => string) =>
      writePaths(`${dir}/${name}.paths`, addresses, path);
    for (const v of variants) {
      const measure = `${dir}/${v.label}.lua`;
      const check = `${dir}/${v.label}_check.lua`;
      const paths = await pathsOf(v.label, v.path ?? ((ip) => `/ip/${ip}${v.query ?? ""}`));
      await Deno.writeTextFile(measure, luaScript(paths, false, v.headers));
      await Deno.writeTextFile(check, luaScript(paths, true, v.headers));
      scripts.set(v.label, { measure, check });
    }
    const ceilingPaths = await pathsOf("ceiling", (ip) => `/ip/${ip}`);
    const ceilingScript = `${dir}/ceiling.lua`;
    await Deno.writeTextFile(ceilingScript, luaScript(ceilingPaths, false));
    const ceilingCheck = `${dir}/ceiling_check.lua`;
    await Deno.writeTextFile(ceilingCheck, luaScript(ceilingPaths, true));

    console.log(
      `wrk -t${THREADS} -c${CONNECTIONS}, ${SECONDS} s per run, ${ROUNDS} rounds, ` +
        `mix ${MIX}: ${addresses.length} requests over ${new Set(addresses).size} addresses`,
    );
    for (const v of variants) console.log(`  ${v.label.padEnd(10)} ${v.what}`);
    console.log(`warm-up: ${WARMUP} s each`);
    const warmUps = [
      { name: "ceiling", server: ceiling, script: ceilingCheck },
      ...variants.map((v) => ({
        name: v.label,
        server: v.server,
        script: scripts.get(v.label)!.check,
      })),
    ];
    for (const { name, server, script } of warmUps) {
      const result = await wrk(server, script, WARMUP);
      console.log(
        `  ${name.padEnd(10)} ${fmt(result.requestsPerSecond)} req/s  ${result.statusLine ?? ""}`,
      );
      const bad = /other=(\d+)/.exec(result.statusLine ?? "");
      if (!bad || Number(bad[1]) > 0 || result.non2xx > 0) {
        throw new Error(`${name} answered non-200s during warm-up:\n${result.output}`);
      }
    }

    const ratios = new Map(variants.map((v) => [v.label, [] as number[]]));
    const p50s = new Map(variants.map((v) => [v.label, [] as number[]]));
    const p99s = new Map(variants.map((v) => [v.label, [] as number[]]));
    const cpus = new Map(variants.map((v) => [v.label, [] as number[]]));
    const ceilingCpus: number[] = [];
    // CPU per request over the mean of the two ceiling runs around it, as the share is taken.
    const cpuRatios = new Map(variants.map((v) => [v.label, [] as number[]]));
    const shares = new Map(SHARES.map((s) => [s.name, [] as number[]]));
    let non2xx = 0;
    let loaded = false;
    const errors: string[] = [];
    const run = async (name: string, server: Server, script: string) => {
      const result = await wrk(server, script, SECONDS);
      if (server !== ceiling) non2xx += result.non2xx;
      if (result.socketErrors) errors.push(`${name}: ${result.socketErrors}`);
      if (result.non2xx > 0) errors.push(`${name}: Non-2xx or 3xx: ${result.non2xx}`);
      if (result.otherLoad !== null && result.otherLoad > OTHER_LOAD_LIMIT) loaded = true;
      return result;
    };
    const loadText = (load: number | null) =>
      load === null ? "  n/a" : `${load.toFixed(2)}${load > OTHER_LOAD_LIMIT ? "!" : ""}`;
    console.log(
      "round  variant     ceiling   variant   ceiling   ratio   CPU ×c   p50 ms  p99 ms  " +
        "other load c / v / c",
    );
    // Every measurement sits between two ceiling runs: c, plain, c, uncounted, c, ...
    let before = await run("ceiling", ceiling, ceilingScript);
    for (let round = 1; round <= ROUNDS; round++) {
      const roundRatios = new Map<string, number>();
      for (const variant of variants) {
        const own = await run(variant.label, variant.server, scripts.get(variant.label)!.measure);
        const after = await run("ceiling", ceiling, ceilingScript);
        const ratio = own.requestsPerSecond /
          ((before.requestsPerSecond + after.requestsPerSecond) / 2);
        ratios.get(variant.label)!.push(ratio);
        roundRatios.set(variant.label, ratio);
        if (own.p50 !== null) p50s.get(variant.label)!.push(own.p50);
        if (own.p99 !== null) p99s.get(variant.label)!.push(own.p99);
        if (own.cpuUs !== null) cpus.get(variant.label)!.push(own.cpuUs);
        if (after.cpuUs !== null) ceilingCpus.push(after.cpuUs);
        const cpuRatio = own.cpuUs !== null && before.cpuUs !== null && after.cpuUs !== null
          ? own.cpuUs / ((before.cpuUs + after.cpuUs) / 2)
          : null;
        if (cpuRatio !== null) cpuRatios.get(variant.label)!.push(cpuRatio);
        console.log(
          `${String(round).padStart(5)}  ${variant.label.padEnd(10)} ${
            fmt(before.requestsPerSecond)
          }  ${fmt(own.requestsPerSecond)}  ${fmt(after.requestsPerSecond)}   ${
            ratio.toFixed(3)
          }  ${cpuRatio === null ? "   n/a" : cpuRatio.toFixed(3).padStart(6)}  ${ms(own.p50)}  ${
            ms(own.p99)
          }  ${loadText(before.otherLoad)} / ${loadText(own.otherLoad)} / ${
            loadText(after.otherLoad)
          }`,
        );
        before = after;
      }
      for (const share of SHARES) {
        const of = roundRatios.get(share.of);
        const over = roundRatios.get(share.over);
        if (of !== undefined && over !== undefined) shares.get(share.name)!.push(of / over);
      }
    }
    console.log(
      "\nvariant     share of ceiling (median)   p50 ms   p99 ms   CPU µs/request (ceiling: " +
        `${medianOrNull(ceilingCpus)?.toFixed(1) ?? "n/a"})   CPU × ceiling (median)`,
    );
    for (const v of variants) {
      const goal = GOALS[v.label];
      const cpu = medianOrNull(cpus.get(v.label)!);
      const cpuRatio = medianOrNull(cpuRatios.get(v.label)!);
      console.log(
        `${v.label.padEnd(10)}  ${median(ratios.get(v.label)!).toFixed(3).padStart(8)}${
          goal ? ` (goal ≥ ${goal})` : "".padEnd(13)
        }      ${ms(medianOrNull(p50s.get(v.label)!))}   ${
          ms(medianOrNull(p99s.get(v.label)!))
        }   ${cpu === null ? "   n/a" : cpu.toFixed(1).padStart(6)}${
          cpuRatio === null ? "n/a".padStart(38) : cpuRatio.toFixed(3).padStart(38)
        }`,
      );
    }
    // CPU per request as a ratio to the anchors measured in the same round.
    for (const anchor of ["nginx", "echoip"]) {
      const own = cpus.get(anchor);
      if (!own || own.length === 0) continue;
      for (const v of variants) {
        if (v.label === anchor) continue;
        const mine = cpus.get(v.label)!;
        const perRound = mine.map((cpu, i) => own[i] === undefined ? NaN : cpu / own[i]!)
          .filter((r) => Number.isFinite(r));
        if (perRound.length === 0) continue;
        console.log(`${v.label} CPU per request ÷ ${anchor}'s: ${median(perRound).toFixed(2)}`);
      }
    }
    for (const share of SHARES) {
      const values = shares.get(share.name)!;
      if (values.length === 0) continue;
      console.log(
        `${share.name}: ${median(values).toFixed(3)}${
          share.goal === null ? "" : ` (goal ≥ ${share.goal})`
        }`,
      );
    }
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
        "cores with the server it loads.",
    );
    if (non2xx > 0) throw new Error("ipintel answered non-2xx responses during the measurement");
  } finally {
    await stopAll();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function medianOrNull(values: number[]): number | null {
  return values.length ? median(values) : null;
}

function ms(value: number | null): string {
  return value === null ? "   n/a" : value.toFixed(2).padStart(6);
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

/** Where nginx and its GeoIP2 module are, when both are installed. */
function findNginx(): { binary: string; module: string } | null {
  const exists = (path: string) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  };
  const onPath = (Deno.env.get("PATH") ?? "").split(":").map((dir) => `${dir}/nginx`);
  const binary = [Deno.env.get("BENCH_NGINX") ?? "", ...onPath, "/usr/sbin/nginx"].find(exists);
  const module = Deno.env.get("BENCH_NGINX_GEOIP2") ??
    "/usr/lib/nginx/modules/ngx_http_geoip2_module.so";
  return binary && exists(module) ? { binary, module } : null;
}

/**
 * nginx's configuration for the `nginx` variant: one worker, in the foreground, everything it
 * writes (pid, error log, temp files) in `dir`, no access log; the GeoIP2 module looks up the
 * address taken from the path in the City and ASN databases and `return` builds the JSON body.
 * Keep-alive is unlimited, as Deno.serve's is, so wrk's connections stay open in both. The
 * free-text names (city, ASN organisation: some ASN names hold quotes) are JSON-escaped by a
 * `map` each, up to two `"` (`return` cannot escape); the bench checks that answers parse.
 */
export function nginxConfig(
  options: { dir: string; port: number; module: string; city: string; asn: string },
): string {
  const { dir, port, module, city, asn } = options;
  const string = (name: string, path: string) => `    $${name} source=$bench_ip ${path};`; // not found: empty;
  const number = (name: string, path: string) =>
    `    $${name} default=null source=$bench_ip ${path};`;
  const body = JSON.stringify({
    success: true,
    data: {
      ip: "$bench_ip",
      geoLocation: {
        continent: "$g_continent",
        continentCode: "$g_continent_code",
        country: "$g_country",
        countryCode: "$g_country_code",
        region: "$g_region",
        regionCode: "$g_region_code",
        city: "$g_city_json",
        postal_Code: "$g_postal",
        is_in_eu: "@g_eu@",
        latitude: "@g_latitude@",
        longitude: "@g_longitude@",
        accuracy_radius: "@g_accuracy@",
      },
      timezone: { time_zone: "$g_time_zone" },
      connection: { asn_number: "@g_asn@", asn_org: "$g_asn_org_json" },
      security: { isVpn: false, isTor: false, isThreat: "low" },
    },
  }).replace(/"@(\w+)@"/g, "$$$1"); // numbers and booleans: the variable unquoted
  return `# Generated by bench/http_bench.ts
load_module ${module};
worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  server_tokens off;
  keepalive_requests 1000000000;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  map $uri $bench_ip { "~^/ip/(?<address>[^/]+)$" $address; default ""; }
${escapeMap("g_city")}
${escapeMap("g_asn_org")}
  geoip2 ${city} {
${string("g_continent", "continent names en")}
${string("g_continent_code", "continent code")}
${string("g_country", "country names en")}
${string("g_country_code", "country iso_code")}
${string("g_region", "subdivisions 0 names en")}
${string("g_region_code", "subdivisions 0 iso_code")}
${string("g_city", "city names en")}
${string("g_postal", "postal code")}
    $g_eu default=0 source=$bench_ip country is_in_european_union;
${number("g_latitude", "location latitude")}
${number("g_longitude", "location longitude")}
${number("g_accuracy", "location accuracy_radius")}
${string("g_time_zone", "location time_zone")}
  }
  geoip2 ${asn} {
${number("g_asn", "autonomous_system_number")}
${string("g_asn_org", "autonomous_system_organization")}
  }
  server {
    listen 127.0.0.1:${port} reuseport;
    default_type application/json;
    location /ip/ { return 200 '${body}'; }
    location = /ready { return 200 ''; }
  }
}
`;
}

/** A map from `$name` to `$name_json`: the same text with up to two `"` escaped for JSON. */
function escapeMap(name: string): string {
  // In nginx's quoted strings `\\` is one backslash: `\\"` gives `\"`.
  return `  map $${name} $${name}_json {
    '~^([^"]*)"([^"]*)$' '$1\\\\"$2';
    '~^([^"]*)"([^"]*)"([^"]*)$' '$1\\\\"$2\\\\"$3';
    default $${name};
  }`;
}

/** Starts the `nginx` variant, or says why it is skipped and returns null. */
/**
 * echoip, the self-hosted Go peer: BENCH_ECHOIP names its binary, else it is
 * built by ../shared/anchors/build-echoip.sh; skipped, with a note, where
 * neither is there. Served on the same City and ASN files as ipintel.
 */
async function startEchoip(dir: string): Promise<Server | null> {
  let binary = Deno.env.get("BENCH_ECHOIP") ?? null;
  const build = `${ROOT}../shared/anchors/build-echoip.sh`;
  if (binary === null) {
    try {
      Deno.statSync(build);
    } catch {
      console.log("echoip variant skipped: no BENCH_ECHOIP and no ../shared/anchors to build it");
      return null;
    }
    binary = `${dir}/echoip/echoip`;
    const built = await new Deno.Command("bash", { args: [build, binary], stdout: "null" })
      .output();
    if (!built.success) {
      console.log(`echoip variant skipped: ${new TextDecoder().decode(built.stderr).trim()}`);
      return null;
    }
  }
  const manifest = await readManifest(DATA_DIR);
  const file = (kind: string) =>
    `${DATA_DIR}/${manifest!.sources.find((s) => s.kind === kind)!.file}`;
  const port = freePort();
  return startCommand(
    "echoip",
    binary,
    ["-f", file("city"), "-c", file("city"), "-a", file("asn"), "-l", `127.0.0.1:${port}`],
    port,
  );
}

async function startNginx(dir: string): Promise<Server | null> {
  const found = findNginx();
  if (!found) {
    console.log(
      "nginx variant skipped: nginx or its GeoIP2 module is not installed " +
        "(Debian: apt-get install nginx-light libnginx-mod-http-geoip2)",
    );
    return null;
  }
  const manifest = await readManifest(DATA_DIR);
  const file = (kind: string) => {
    const entry = manifest?.sources.find((s) => s.kind === kind);
    if (!entry) throw new Error(`No ${kind} database in ${DATA_DIR}: run "deno task data"`);
    return `${DATA_DIR}/${entry.file}`;
  };
  const port = freePort();
  const config = `${dir}/nginx.conf`;
  await Deno.writeTextFile(
    config,
    nginxConfig({ dir, port, module: found.module, city: file("city"), asn: file("asn") }),
  );
  // -e: the error log before the configuration is read (else nginx opens /var/log/nginx/error.log).
  return startCommand("nginx", found.binary, ["-p", dir, "-c", config, "-e", "stderr"], port);
}

/**
 * nginx's answers are checked against mmdb-lib's reading of the same City database: a 200, a
 * body that parses, the same country code, and a real country for most addresses.
 */
async function checkNginxAnswers(server: Server, addresses: readonly string[]): Promise<void> {
  const manifest = await readManifest(DATA_DIR);
  const entry = manifest?.sources.find((s) => s.kind === "city");
  const bytes = await Deno.readFile(`${DATA_DIR}/${entry!.file}`);
  const city = new Reader<CityResponse>(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
  );
  let withCountry = 0;
  for (const ip of addresses) {
    const response = await fetch(`http://127.0.0.1:${server.port}/ip/${ip}`);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`nginx: /ip/${ip} answered ${response.status}`);
    let body: { data: { geoLocation: { countryCode: string; country: string } } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`nginx: /ip/${ip} answered a body that is not JSON: ${text}`);
    }
    const expected = city.get(ip)?.country?.iso_code ?? "";
    const { countryCode, country } = body.data.geoLocation;
    if (countryCode !== expected) {
      throw new Error(`nginx: /ip/${ip} gave country ${countryCode}, the database ${expected}`);
    }
    if (country !== "") withCountry++;
  }
  if (withCountry < addresses.length * 0.9) {
    throw new Error(`nginx: only ${withCountry} of ${addresses.length} answers name a country`);
  }
  console.log(
    `nginx: ${addresses.length} answers checked (200, JSON, country as mmdb-lib reads it; ` +
      `${withCountry} name one)`,
  );
}

if (import.meta.main) {
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
}
