/**
 * `/health` and a lookup during the server's own background update of one
 * big list: a 16 MB IPv4 list (about 1.1 million random addresses) given as a
 * local file in the sources file, fetched by `ipintel serve` right after it
 * listens (the list is absent), compiled in the data worker, installed, then
 * loaded by the serving isolate (hot reload). Throughout, one `/health` and
 * one `/ip/8.8.8.8` are asked every 10 ms, one after the other; the figures
 * are the slowest answer of each phase (before the update, while it runs,
 * after the new data is served), beside the same client's figures against
 * the idle server (the ceiling of this machine and client at that moment).
 *
 * Run: `deno task bench:health` (needs `deno task data` done). Environment:
 * BENCH_LIST_MB (default 16), BENCH_CPU_PROF=dir (the server runs with
 * --cpu-prof, its profile written there when it stops), BENCH_WORKERS
 * (IPINTEL_WORKERS, default 1: the serving isolate is the one that reloads).
 *
 * @module
 */

import { DATA_DIR, freePort, ROOT } from "./_serve.ts";
import { randomIpv4List } from "../tests/data/update/_big_list.ts";

const LIST_MB = Number(Deno.env.get("BENCH_LIST_MB") ?? "16");
const PROFILE_DIR = Deno.env.get("BENCH_CPU_PROF") ?? null;
const WORKERS = Deno.env.get("BENCH_WORKERS") ?? "1";
const POLL_MS = 10;

interface Sample {
  at: number;
  health: number;
  lookup: number;
}

/** A data directory with the installed City and ASN databases, and a sources file naming the list. */
async function prepare(dir: string): Promise<{ dataDir: string; sourcesFile: string }> {
  const dataDir = `${dir}/data`;
  await Deno.mkdir(dataDir);
  const manifest = JSON.parse(await Deno.readTextFile(`${DATA_DIR}/manifest.json`));
  const databases = (manifest.sources as { kind: string; file: string }[])
    .filter((s) => s.kind === "city" || s.kind === "asn");
  for (const s of databases) await Deno.copyFile(`${DATA_DIR}/${s.file}`, `${dataDir}/${s.file}`);
  await Deno.writeTextFile(
    `${dataDir}/manifest.json`,
    JSON.stringify({ ...manifest, sources: databases, failures: {} }),
  );
  const sources = JSON.parse(await Deno.readTextFile(`${DATA_DIR}/sources.json`));
  await Deno.writeTextFile(`${dir}/big.txt`, randomIpv4List(LIST_MB * 1_000_000));
  const sourcesFile = `${dir}/sources.json`;
  await Deno.writeTextFile(
    sourcesFile,
    JSON.stringify({
      ...sources,
      sources: [
        ...sources.sources.filter((s: { kind: string }) => s.kind === "city" || s.kind === "asn"),
        {
          name: "big-list",
          kind: "threat",
          format: "ip-list",
          url: "big.txt",
          license: "benchmark",
          attribution: "benchmark",
        },
      ],
    }),
  );
  return { dataDir, sourcesFile };
}

/** Milliseconds a GET takes, to the end of its body (Infinity past 30 s). */
async function timed(url: string): Promise<number> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  } catch (error) {
    if (error instanceof DOMException && error.name === "TimeoutError") return Infinity;
    throw error;
  }
  return performance.now() - started;
}

function loadAverage(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}

function summary(samples: Sample[]): string {
  if (samples.length === 0) return "no samples";
  const of = (key: "health" | "lookup") => {
    const values = samples.map((s) => s[key]).sort((a, b) => a - b);
    const p99 = values[Math.min(values.length - 1, Math.floor(values.length * 0.99))]!;
    return `${key} max ${values.at(-1)!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`;
  };
  return `${of("health")}; ${of("lookup")} (${samples.length} samples)`;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * The serving isolate's longest stretches without a turn of its event loop
 * (consecutive non-idle samples of its CPU profile) after `fromMs`, each with
 * the functions it spent most samples in: what holds requests, whatever the
 * machine's load.
 */
function busyStretches(profile: CpuProfile, fromMs: number): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const label = (id: number) => {
    const frame = byId.get(id)!;
    return `${frame.functionName || "(anonymous)"} ${frame.url.split("/").at(-1)}:${
      frame.lineNumber + 1
    }`;
  };
  const runs: { start: number; end: number; ids: number[] }[] = [];
  let t = profile.startTime;
  let run: { start: number; end: number; ids: number[] } | null = null;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i]!;
    if (byId.get(id)!.functionName === "(idle)") {
      if (run) runs.push(run);
      run = null;
    } else {
      run ??= { start: t, end: t, ids: [] };
      run.end = t;
      run.ids.push(id);
    }
  });
  return runs
    .filter((r) => (r.start - profile.startTime) / 1000 >= fromMs)
    .sort((a, b) => (b.end - b.start) - (a.end - a.start))
    .slice(0, 3)
    .map((r) => {
      const counts = new Map<string, number>();
      for (const id of r.ids) counts.set(label(id), (counts.get(label(id)) ?? 0) + 1);
      const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3)
        .map(([name, n]) => `${name} ×${n}`).join(", ");
      return `${((r.end - r.start) / 1000).toFixed(0)} ms at ${
        ((r.start - profile.startTime) / 1e6).toFixed(1)
      } s (${top})`;
    });
}

/** Peak resident memory of a process in MB (VmHWM; worker isolates are threads, so included). */
function peakMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

const dir = await Deno.makeTempDir({ prefix: "ipintel-health-bench-" });
try {
  const { dataDir, sourcesFile } = await prepare(dir);
  const listBytes = (await Deno.stat(`${dir}/big.txt`)).size;
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const profile = PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...profile,
      "main.ts",
      "serve",
      ...["--port", String(port), "--host", "127.0.0.1", "--auth", "off", "--log", "off"],
      ...["--data-dir", dataDir, "--sources", sourcesFile, "--kv", `${dir}/bench.kv`],
      ...["--workers", WORKERS, "--update-interval", "86400"],
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // The server's own lines, timed: the update's end and the new data served.
  const lines: { at: number; line: string }[] = [];
  const reading = (async () => {
    const text = child.stderr.pipeThrough(new TextDecoderStream());
    let rest = "";
    for await (const chunk of text) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const line of parts) lines.push({ at: performance.now() - started, line });
    }
  })();
  const loaded = () => lines.find((l) => l.line.includes("new data loaded"))?.at ?? null;
  for (;;) { // listening, with the installed databases loaded
    try {
      await timed(`${base}/ip/8.8.8.8`);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const samples: Sample[] = [];
  const deadline = performance.now() + 600_000;
  const idleFor = 5000; // after the new data is served: the idle server, the ceiling
  while (performance.now() < deadline) {
    const at = performance.now() - started;
    const health = await timed(`${base}/health`);
    const lookup = await timed(`${base}/ip/8.8.8.8`);
    samples.push({ at, health, lookup });
    const servedAt = loaded();
    if (servedAt !== null && at > servedAt + idleFor) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const peak = peakMb(child.pid);
  child.kill("SIGTERM");
  await child.status;
  await reading;
  const servedAt = loaded();
  if (servedAt === null) {
    throw new Error(`the list was never served:\n${lines.map((l) => l.line).join("\n")}`);
  }
  console.log(
    `list ${(listBytes / 1e6).toFixed(1)} MB (${LIST_MB} MB asked); new data served ${
      (servedAt / 1000).toFixed(1)
    } s after spawn; server peak RSS ${peak.toFixed(0)} MB; load average ${loadAverage()}`,
  );
  for (const l of lines) console.log(`  [${(l.at / 1000).toFixed(1)} s] ${l.line}`);
  const settled = servedAt + 1000; // the reload's last work and its collection
  console.log(`update and reload: ${summary(samples.filter((s) => s.at < settled))}`);
  console.log(`idle afterwards (ceiling): ${summary(samples.filter((s) => s.at >= settled))}`);
  const slow = samples.filter((s) => s.health > 100 || s.lookup > 100);
  for (const s of slow) {
    console.log(
      `  slow at ${(s.at / 1000).toFixed(2)} s: health ${s.health.toFixed(0)} ms, lookup ${
        s.lookup.toFixed(0)
      } ms`,
    );
  }
  if (PROFILE_DIR) {
    // The serving isolate's profile (the newest one without a worker's name), past its start.
    const names = [...Deno.readDirSync(PROFILE_DIR)].map((e) => e.name)
      .filter((name) => name.endsWith(".cpuprofile") && !name.includes("worker")).sort();
    const profile = JSON.parse(
      await Deno.readTextFile(`${PROFILE_DIR}/${names.at(-1)}`),
    ) as CpuProfile;
    console.log("serving isolate's longest busy stretches after its first 2 s:");
    for (const line of busyStretches(profile, 2000)) console.log(`  ${line}`);
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
