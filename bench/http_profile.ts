/**
 * Where a request's CPU goes: the bare `Deno.serve` ceiling (bench/ceiling_server.ts) and
 * ipintel (`plain`: one process, auth off, `--workers 1`, `IPINTEL_UPDATE_INTERVAL=off`) profiled
 * the same way under the same wrk load as `deno task bench:http` (its wrk settings, Lua script
 * and address mix), side by side, in µs per request.
 *
 * Run: `deno task bench:profile` (deno run --allow-all bench/http_profile.ts). Needs wrk and
 * Linux perf (Debian: linux-perf); run it as root or with kernel.perf_event_paranoid ≤ 1.
 *
 * For each server, in turn (never both at once):
 * 1. CPU profile. Started with `--v8-flags=--perf-basic-prof` (V8 writes /tmp/perf-PID.map, so
 *    perf can name JIT code), warmed up, then `perf record -e cpu-clock -g -p PID` for the whole
 *    of one wrk run. The server's CPU per request is read from /proc over that run (as bench:http
 *    does); a sample is worth CPU-µs-per-request ÷ samples-per-request, so each row below is
 *    `samples in the row ÷ all samples × CPU µs/request`.
 * 2. GC. Started again with `--v8-flags=--trace-gc-nvp` (one JSON line per GC), one wrk run of
 *    the same length: scavenges and full GCs per 1,000 requests, main-thread pause per request,
 *    and bytes allocated per request (the sum of V8's own `allocated` field, the bytes allocated
 *    since the previous GC, over the GCs of the run: exact to within one GC interval).
 *
 * How to read it:
 * - "by where the CPU was" classifies each sample by its innermost frame: the kernel; the deno
 *   binary (Rust, V8's C++ runtime, the GC, ops: the binary is stripped, so perf sees addresses
 *   only); shared libraries (libc...); V8's builtins and stubs (`Builtin:`, `Stub:`: they run from
 *   a copy of the binary, so they are named here from V8's map file, not by perf); the
 *   interpreter (`BytecodeHandler:`); and JIT code: RegExp code, Deno's own JS (`ext:`), Hono,
 *   ipintel's `src/` and other JIT code (npm packages such as mmdb-lib). The last column is
 *   ipintel − ceiling: the extra µs a request costs, by place.
 * - "deno binary + builtins by nearest JS caller" gives that native time a cause: the nearest
 *   JavaScript function above it in the call chain (the one that ran an op, an API callback, a
 *   builtin, an allocation that triggered a scavenge). Samples with no JS caller are the
 *   runtime's own work on that thread: the event loop and HTTP on "deno", GC helpers on
 *   "V8 DefaultWorke" (and samples whose chain perf could not walk through the binary's frames).
 * - "largest differences by innermost symbol": the 15 names (JIT tiers `*~^+` merged) whose
 *   µs grow most from the ceiling to ipintel; then each server's 15 hottest, in µs/request.
 * - The machine's other load (cores used by other processes) is shown per run, as in bench:http;
 *   above 0.2 (marked !) the figures are suspect. perf's sampling with call chains adds its own
 *   cost to both servers' CPU; compare the two, not these totals with bench:http's.
 *
 * Environment: BENCH_SECONDS (10), BENCH_WARMUP (5), BENCH_THREADS (2), BENCH_CONNECTIONS (64),
 * BENCH_ADDRESSES (10000), IPINTEL_DATA_DIR (./data), as for bench:http; BENCH_PROFILE_KEEP=1
 * keeps the perf.data files and V8's map files and prints their paths (for `perf report -i`).
 *
 * @module
 */

import { knownAddresses } from "./_addresses.ts";
import { freePort, serveArgs } from "./_serve.ts";
import {
  ADDRESSES,
  CONNECTIONS,
  DATA_DIR,
  luaScript,
  ROOT,
  SECONDS,
  type Server,
  stopAll,
  THREADS,
  waitFor,
  WARMUP,
  writePaths,
  wrk,
  type WrkResult,
} from "./http_bench.ts";

const KEEP = Deno.env.get("BENCH_PROFILE_KEEP") === "1";

/** A server to profile: how to start it and where it says it is ready. */
interface Target {
  label: string;
  /** `deno` arguments after `run` and before the script; the V8 flags go in front. */
  args: (port: number) => string[];
  ready: string;
}

const TARGETS: Target[] = [
  {
    label: "ceiling",
    args: (port) => ["--allow-net", "bench/ceiling_server.ts", "--port", String(port)],
    ready: "/",
  },
  {
    label: "ipintel",
    args: (port) => [
      "-A",
      ...serveArgs(port),
      "--data-dir",
      DATA_DIR,
      "--auth",
      "off",
      "--kv",
      ":memory:",
      "--workers",
      "1",
    ],
    ready: "/ready",
  },
];

/** Every process this bench started and has not yet seen exit: killed on the way out. */
const running = new Set<Deno.ChildProcess>();
/** Files to remove on the way out (V8's map files live in /tmp, outside the temp dir). */
const leftovers = new Set<string>();

/** A server plus the lines of its stdout (V8's --trace-gc-nvp output goes there). */
interface Started extends Server {
  stdout: string[];
}

/**
 * Starts `deno run <v8Flag> ...` with stdout line-buffered (`stdbuf -oL`: V8 prints GC traces
 * with printf, which a pipe would buffer by 4 KB, so lines would arrive late and out of step
 * with the run).
 */
function startDeno(target: Target, v8Flag: string): Started {
  const port = freePort();
  const child = new Deno.Command("stdbuf", {
    args: ["-oL", Deno.execPath(), "run", v8Flag, ...target.args(port)],
    cwd: ROOT,
    env: { IPINTEL_UPDATE_INTERVAL: "off" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  running.add(child);
  child.status.then(() => running.delete(child));
  let tail = "";
  const stdout: string[] = [];
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4000);
    }
  })().catch(() => {});
  (async () => {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of child.stdout) {
      const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
      partial = lines.pop() ?? "";
      stdout.push(...lines);
    }
  })().catch(() => {});
  return { name: target.label, port, child, stderrTail: () => tail, stdout };
}

async function stop(child: Deno.ChildProcess, signal: Deno.Signal = "SIGTERM"): Promise<void> {
  try {
    child.kill(signal);
  } catch {
    // already exited
  }
  await child.status.catch(() => {});
}

async function cleanUp(): Promise<void> {
  await stopAll(); // wrk runs under way (this bench starts no server through bench:http's list)
  // perf first (SIGINT lets it finish its file), then the servers.
  for (const child of [...running].reverse()) await stop(child, "SIGINT");
  for (const child of [...running]) await stop(child, "SIGKILL");
  if (!KEEP) {
    for (const file of leftovers) await Deno.remove(file, { recursive: true }).catch(() => {});
  }
}

/** Warms a server up with the status-counting script; fails on any non-200. */
async function warmUp(server: Server, checkScript: string): Promise<void> {
  const result = await wrk(server, checkScript, WARMUP);
  const bad = /other=(\d+)/.exec(result.statusLine ?? "");
  if (!bad || Number(bad[1]) > 0 || result.non2xx > 0) {
    throw new Error(`${server.name} answered non-200s during warm-up:\n${result.output}`);
  }
}

/** Where a sample's innermost frame was. */
const CATEGORIES = [
  "kernel",
  "deno binary (Rust, V8 C++, GC, ops)",
  "shared libraries (libc...)",
  "V8 builtins and stubs",
  "V8 interpreter (BytecodeHandler)",
  "RegExp code",
  "Deno's JS (ext:)",
  "Hono",
  "ipintel src/",
  "other JIT (npm, bench...)",
  "other (unresolved)",
] as const;
type Category = typeof CATEGORIES[number];

/** One frame of a perf callchain. */
interface Frame {
  ip: string;
  sym: string;
  dso: string;
}

const isJit = (frame: Frame) => /\/perf-\d+\.map$/.test(frame.dso);
const isDeno = (frame: Frame) => frame.dso === Deno.execPath() || /\/deno$/.test(frame.dso);

function categorise(frame: Frame): Category {
  if (frame.dso === "[kernel.kallsyms]" || frame.ip.startsWith("ffffffff")) return "kernel";
  if (isDeno(frame)) return "deno binary (Rust, V8 C++, GC, ops)";
  if (isJit(frame)) {
    const { sym } = frame;
    if (sym.startsWith("Builtin:") || sym.startsWith("Stub:")) return "V8 builtins and stubs";
    if (sym.startsWith("BytecodeHandler:")) return "V8 interpreter (BytecodeHandler)";
    if (sym.startsWith("RegExp:")) return "RegExp code";
    if (sym.includes(" ext:")) return "Deno's JS (ext:)";
    if (/\/hono@|npm\/[^ ]*\/hono\//.test(sym)) return "Hono";
    if (sym.includes(`${ROOT}src/`)) return "ipintel src/";
    return "other JIT (npm, bench...)";
  }
  if (/\.so(\.[\d.]+)?$/.test(frame.dso)) return "shared libraries (libc...)";
  return "other (unresolved)";
}

/** A frame's name for the tables: JIT tiers merged, this checkout's path shortened. */
function frameName(frame: Frame): string {
  if (isDeno(frame)) return "[deno binary, stripped]";
  if (frame.sym === "[unknown]") return `[unknown in ${frame.dso.split("/").pop()}]`;
  const name = frame.sym.replace(/^JS:[*~^+]'?/, "JS:").replaceAll(`file://${ROOT}`, "")
    .replace(/file:\/\/\/\S*\/registry\.npmjs\.org\//, "npm:");
  return name.length > 90 ? `${name.slice(0, 87)}...` : name;
}

/**
 * The nearest JavaScript function above a deno-binary frame: what called into the runtime (an
 * op, an API callback, an allocation that ran the GC). Without one, the runtime's own work on
 * that thread (the event loop on "deno", the GC's helpers on "V8 DefaultWorke"...).
 */
function namedCaller(chain: Frame[], thread: string): string {
  for (const frame of chain.slice(1)) {
    if (isJit(frame) && frame.sym.startsWith("JS:")) return frameName(frame);
  }
  return `(no JS caller; thread "${thread}")`;
}

/**
 * V8's map file (/tmp/perf-PID.map: "start size name", hex) as sorted ranges. V8's builtins
 * run from a copy of the embedded blob that is a mapping of the deno binary, so perf names them
 * `[unknown]` in the binary; the map file names them (`Builtin:`, `BytecodeHandler:`).
 */
interface CodeMap {
  file: string;
  starts: number[];
  ends: number[];
  names: string[];
  /** The deno binary's executable mappings; perf prints call-chain frames as file offsets. */
  binary: { start: number; end: number; offset: number }[];
}

/** Reads V8's map file and the deno binary's executable mappings of process `pid`. */
async function readCodeMap(pid: number): Promise<CodeMap> {
  const file = `/tmp/perf-${pid}.map`;
  const binary = (await Deno.readTextFile(`/proc/${pid}/maps`)).split("\n").flatMap((line) => {
    // "7f90afdc0000-7f90affe6000 r-xp 035cf000 fe:00 5308859   /path/to/deno"
    const f = line.trim().split(/\s+/);
    if (f[1] !== "r-xp" || f[5] !== Deno.execPath()) return [];
    const [start, end] = f[0]!.split("-").map((hex) => parseInt(hex, 16));
    return [{ start: start!, end: end!, offset: parseInt(f[2]!, 16) }];
  });
  const entries = (await Deno.readTextFile(file)).split("\n").flatMap((line) => {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!match) return [];
    const start = parseInt(match[1]!, 16);
    return [{ start, end: start + parseInt(match[2]!, 16), name: match[3]! }];
  }).sort((x, y) => x.start - y.start);
  return {
    file,
    binary,
    starts: entries.map((e) => e.start),
    ends: entries.map((e) => e.end),
    names: entries.map((e) => e.name),
  };
}

/**
 * The V8 code object at file offset `offset` of the deno binary, if the map names one: the
 * offset is tried in each executable mapping of the binary (the builtins' copy is one).
 */
function lookUpBinary(map: CodeMap, offset: number): string | null {
  for (const { start, end, offset: base } of map.binary) {
    const ip = start + offset - base;
    if (offset < base || ip >= end) continue;
    const name = lookUpCode(map, ip);
    if (name !== null) return name;
  }
  return null;
}

/** The V8 code object holding `ip`, if the map names one. */
function lookUpCode(map: CodeMap, ip: number): string | null {
  let low = 0;
  let high = map.starts.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (map.starts[mid]! <= ip) {
      found = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found >= 0 && ip < map.ends[found]! ? map.names[found]! : null;
}

/** Sample counts of one profile. */
interface Profile {
  total: number;
  byCategory: Map<Category, number>;
  bySymbol: Map<string, number>;
  nativeByCaller: Map<string, number>;
}

const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/** Reads `perf script` of a recording, a sample at a time (header line, frames, blank line). */
async function readProfile(data: string, codeMap: CodeMap): Promise<Profile> {
  const child = new Deno.Command("perf", {
    args: ["script", "-i", data, "-F", "comm,tid,ip,sym,dso"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  running.add(child);
  const profile: Profile = {
    total: 0,
    byCategory: new Map(),
    bySymbol: new Map(),
    nativeByCaller: new Map(),
  };
  let chain: Frame[] = [];
  let thread = "";
  const finish = () => {
    const leaf = chain[0];
    if (leaf) {
      profile.total++;
      const category = categorise(leaf);
      profile.byCategory.set(category, (profile.byCategory.get(category) ?? 0) + 1);
      add(profile.bySymbol, frameName(leaf));
      if (isDeno(leaf) || category === "V8 builtins and stubs") {
        add(profile.nativeByCaller, namedCaller(chain, thread));
      }
    }
    chain = [];
  };
  const decoder = new TextDecoder();
  let partial = "";
  for await (const chunk of child.stdout) {
    const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("\t")) {
        finish(); // a header or a blank line ends the sample before it
        // "V8 DefaultWorke  4478 ": the thread's name, then its id
        if (line.trim() !== "") thread = line.trim().replace(/\s+\d+$/, "");
        continue;
      }
      // "\t    7f15bc015308 JS:*fn ext:deno_fetch/20_headers.js:1:2780 (/tmp/perf-4477.map)"
      const text = line.trim();
      const space = text.indexOf(" ");
      const open = text.lastIndexOf(" (");
      if (space < 0 || open < space) continue;
      const frame = {
        ip: text.slice(0, space),
        sym: text.slice(space + 1, open),
        dso: text.slice(open + 2, -1),
      };
      const code = isDeno(frame) ? lookUpBinary(codeMap, parseInt(frame.ip, 16)) : null;
      chain.push(code === null ? frame : { ...frame, sym: code, dso: codeMap.file });
    }
  }
  finish();
  const status = await child.status;
  running.delete(child);
  if (!status.success) throw new Error(`perf script -i ${data} failed`);
  return profile;
}

/** What the CPU profile of one server gives. */
interface CpuRun {
  label: string;
  run: WrkResult;
  profile: Profile;
}

async function profileCpu(target: Target, dir: string, scripts: Scripts): Promise<CpuRun> {
  const server = startDeno(target, "--v8-flags=--perf-basic-prof");
  leftovers.add(`/tmp/perf-${server.child.pid}.map`);
  try {
    await waitFor(server, target.ready, 120_000);
    await warmUp(server, scripts.check);
    const data = `${dir}/${target.label}.perf.data`;
    if (KEEP) leftovers.delete(`/tmp/perf-${server.child.pid}.map`);
    const perf = new Deno.Command("perf", {
      args: ["record", "-e", "cpu-clock", "-g", "-p", String(server.child.pid), "-o", data],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    running.add(perf);
    let perfErr = "";
    const errDone = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of perf.stderr) perfErr += decoder.decode(chunk, { stream: true });
    })().catch(() => {});
    // perf prints nothing when attached; a second is ample (its samples before the run are idle).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const run = await wrk(server, scripts.measure, SECONDS);
    await stop(perf, "SIGINT");
    running.delete(perf);
    await errDone;
    if (!(await Deno.stat(data).catch(() => null))) {
      throw new Error(`perf record wrote nothing for ${target.label}:\n${perfErr}`);
    }
    const profile = await readProfile(data, await readCodeMap(server.child.pid));
    if (KEEP) console.log(`kept: ${data} (with /tmp/perf-${server.child.pid}.map)`);
    return { label: target.label, run, profile };
  } finally {
    await stop(server.child);
  }
}

/** What the GC trace of one server gives, over one wrk run. */
interface GcRun {
  label: string;
  run: WrkResult;
  scavenges: number;
  fullGcs: number;
  pauseMs: number;
  allocatedBytes: number;
}

async function traceGc(target: Target, scripts: Scripts): Promise<GcRun> {
  const server = startDeno(target, "--v8-flags=--trace-gc-nvp");
  try {
    await waitFor(server, target.ready, 120_000);
    await warmUp(server, scripts.check);
    const from = server.stdout.length;
    const run = await wrk(server, scripts.measure, SECONDS);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last lines through the pipe
    const gc: GcRun = {
      label: target.label,
      run,
      scavenges: 0,
      fullGcs: 0,
      pauseMs: 0,
      allocatedBytes: 0,
    };
    for (const line of server.stdout.slice(from)) {
      const json = line.indexOf(" GC: {");
      if (json < 0) continue;
      const event = JSON.parse(line.slice(json + 5)) as {
        gc: string;
        pause: number;
        allocated: number;
      };
      if (event.gc === "s" || event.gc.startsWith("mm")) gc.scavenges++; // minor GCs
      else gc.fullGcs++;
      gc.pauseMs += event.pause;
      gc.allocatedBytes += event.allocated;
    }
    return gc;
  } finally {
    await stop(server.child);
  }
}

interface Scripts {
  measure: string;
  check: string;
}

const pad = (text: string, width: number) => text.padStart(width);
const us = (value: number) => value.toFixed(2);
const loadText = (load: number | null) =>
  load === null ? "n/a" : `${load.toFixed(2)}${load > 0.2 ? "!" : ""}`;

/** µs per request of `count` samples of a profile. */
function perRequest(cpu: CpuRun, count: number): number {
  return cpu.profile.total === 0 ? 0 : count / cpu.profile.total * (cpu.run.cpuUs ?? 0);
}

function printCpu(ceiling: CpuRun, ipintel: CpuRun): void {
  console.log("\nCPU per request, µs (samples × CPU µs/request ÷ samples)");
  for (const cpu of [ceiling, ipintel]) {
    console.log(
      `  ${cpu.label.padEnd(8)} ${cpu.run.requestsPerSecond.toFixed(0)} req/s, ` +
        `${cpu.run.requests} requests, CPU ${us(cpu.run.cpuUs ?? NaN)} µs/request, ` +
        `${cpu.profile.total} samples, other load ${loadText(cpu.run.otherLoad)}`,
    );
  }
  console.log(
    `\n${"by where the CPU was".padEnd(38)}${pad("ceiling", 9)}${pad("ipintel", 9)}${
      pad("diff", 9)
    }`,
  );
  for (const category of CATEGORIES) {
    const c = perRequest(ceiling, ceiling.profile.byCategory.get(category) ?? 0);
    const i = perRequest(ipintel, ipintel.profile.byCategory.get(category) ?? 0);
    console.log(`  ${category.padEnd(36)}${pad(us(c), 9)}${pad(us(i), 9)}${pad(us(i - c), 9)}`);
  }
  const c = ceiling.run.cpuUs ?? 0;
  const i = ipintel.run.cpuUs ?? 0;
  console.log(`  ${"total".padEnd(36)}${pad(us(c), 9)}${pad(us(i), 9)}${pad(us(i - c), 9)}`);

  const compare = (title: string, of: (cpu: CpuRun) => Map<string, number>, limit: number) => {
    console.log(`\n${title.padEnd(92)}${pad("ceiling", 9)}${pad("ipintel", 9)}${pad("diff", 9)}`);
    const names = new Set([...of(ceiling).keys(), ...of(ipintel).keys()]);
    const rows = [...names].map((name) => {
      const a = perRequest(ceiling, of(ceiling).get(name) ?? 0);
      const b = perRequest(ipintel, of(ipintel).get(name) ?? 0);
      return { name, a, b, diff: b - a };
    }).sort((x, y) => y.diff - x.diff).slice(0, limit);
    for (const row of rows) {
      console.log(
        `  ${row.name.padEnd(90)}${pad(us(row.a), 9)}${pad(us(row.b), 9)}${pad(us(row.diff), 9)}`,
      );
    }
  };
  compare(
    "deno binary + builtins by nearest JS caller, largest differences",
    (p) => p.profile.nativeByCaller,
    15,
  );
  compare("largest differences by innermost symbol", (p) => p.profile.bySymbol, 15);
  for (const cpu of [ceiling, ipintel]) {
    console.log(`\ntop symbols of ${cpu.label}${pad("µs/req", 100 - 16 - cpu.label.length)}`);
    const rows = [...cpu.profile.bySymbol].sort((a, b) => b[1] - a[1]).slice(0, 15);
    for (const [name, count] of rows) {
      console.log(`  ${name.padEnd(90)}${pad(us(perRequest(cpu, count)), 9)}`);
    }
  }
}

function printGc(runs: GcRun[]): void {
  console.log(
    `\nGC (--trace-gc-nvp, one ${SECONDS} s run each)   scavenges/1000 req   full GCs/1000 req` +
      "   pause ms   pause µs/req   bytes allocated/req   other load",
  );
  for (const gc of runs) {
    const n = gc.run.requests;
    console.log(
      `  ${gc.label.padEnd(38)}${pad((gc.scavenges / n * 1000).toFixed(3), 11)}${
        pad((gc.fullGcs / n * 1000).toFixed(3), 20)
      }${pad(gc.pauseMs.toFixed(1), 11)}${pad((gc.pauseMs * 1000 / n).toFixed(2), 15)}${
        pad((gc.allocatedBytes / n).toFixed(0), 22)
      }${pad(loadText(gc.run.otherLoad), 13)}`,
    );
  }
}

/** Fails early, naming what to install, when a tool this bench runs is missing (cannot start). */
async function requireTool(command: string, args: string[], hint: string): Promise<void> {
  const ok = await new Deno.Command(command, { args, stdout: "null", stderr: "null" }).output()
    .then(() => true, () => false);
  if (!ok) throw new Error(`${command} is needed and did not run: ${hint}`);
}

async function main(): Promise<void> {
  await requireTool("perf", ["--version"], "install Linux perf (Debian: linux-perf)");
  await requireTool("wrk", ["--version"], "install wrk");
  await requireTool("stdbuf", ["--version"], "install coreutils");
  const addresses = await knownAddresses(DATA_DIR, ADDRESSES, 1);
  const dir = await Deno.makeTempDir({ prefix: "ipintel-http-profile-" });
  leftovers.add(dir);
  const scripts = { measure: `${dir}/load.lua`, check: `${dir}/check.lua` };
  const paths = await writePaths(`${dir}/load.paths`, addresses);
  await Deno.writeTextFile(scripts.measure, luaScript(paths, false));
  await Deno.writeTextFile(scripts.check, luaScript(paths, true));
  console.log(
    `wrk -t${THREADS} -c${CONNECTIONS}, ${SECONDS} s per run, ${addresses.length} addresses; ` +
      `warm-up ${WARMUP} s; perf record -e cpu-clock -g`,
  );
  const cpu: CpuRun[] = [];
  for (const target of TARGETS) {
    console.log(`profiling ${target.label}...`);
    cpu.push(await profileCpu(target, dir, scripts));
  }
  const gc: GcRun[] = [];
  for (const target of TARGETS) {
    console.log(`tracing GC of ${target.label}...`);
    gc.push(await traceGc(target, scripts));
  }
  printCpu(cpu[0]!, cpu[1]!);
  printGc(gc);
  if ([...cpu, ...gc].some((r) => (r.run.otherLoad ?? 0) > 0.2)) {
    console.log("warning: runs marked ! shared the machine with more than 0.2 cores of other load");
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    cleanUp().finally(() => Deno.exit(130));
  });
}

try {
  await main();
  await cleanUp();
} catch (error) {
  await cleanUp();
  console.error(error instanceof Error ? error.message : error);
  Deno.exit(1);
}
