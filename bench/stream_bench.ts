/**
 * Streamed bulk against what users would otherwise run, on the same 1,000,000
 * addresses: `ipintel lookup -` (the full answer, NDJSON) and a streamed
 * `POST /bulk?format=ndjson` (curl as the client, and Python's urllib, which
 * sends the whole body before it reads the answer) against a small Python
 * script over MaxMind's reader with its libmaxminddb C extension (Debian
 * python3-maxminddb: City + ASN lookups, one JSON line each, reading standard
 * input), and against `mmdblookup` (one process per lookup, so timed on a
 * sample). Goals: the CLI ≥ 4× the Python reader's addresses/s, HTTP ≥ 2×, and
 * the server's memory flat within 50 MB during the 1,000,000-address stream.
 *
 * The addresses: the mix of {@link mixedLines} (89% random public IPv4 the
 * City database knows, 9% random public IPv6, 1% invalid lines, 1% reserved),
 * nearly all distinct: the record caches help only as far as a City or ASN
 * record covers many addresses. Each contender's output lines are counted (all must answer
 * every line). The contenders run interleaved, BENCH_ROUNDS (3) rounds of each,
 * and each ratio is taken within its round: the machine is shared.
 *
 * Run: `deno task bench:stream` (BENCH_LINES to change the 1,000,000).
 *
 * @module
 */

import {
  DATA_DIR,
  envInt,
  machineLoad,
  median,
  ROOT,
  rssMb,
  SERVER_V8_FLAGS,
  startServer,
} from "./_serve.ts";
import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { parseIp } from "../src/base/ip/parse.ts";
import { reservedRangeName } from "../src/base/ip/reserved.ts";
import { seededRandom } from "../tests/_random.ts";
import { pythonWith } from "../tests/_python.ts";
import { readManifest } from "../src/data/sources/manifest.ts";

const LINES = envInt("BENCH_LINES", 1_000_000);
const ROUNDS = envInt("BENCH_ROUNDS", 3);
const MMDBLOOKUP_SAMPLE = envInt("BENCH_MMDBLOOKUP_SAMPLE", 1000);

/** The Python contender: MaxMind's reader (C extension), City + ASN, one JSON line each. */
const PYTHON_READER = `
import json, sys
import maxminddb
city = maxminddb.open_database(sys.argv[1], maxminddb.MODE_MMAP_EXT)
asn = maxminddb.open_database(sys.argv[2], maxminddb.MODE_MMAP_EXT)
write = sys.stdout.write
for line in sys.stdin:
    ip = line.strip()
    if not ip:
        continue
    try:
        write(json.dumps({"ip": ip, "city": city.get(ip), "asn": asn.get(ip)}) + "\\n")
    except ValueError as error:
        write(json.dumps({"ip": ip, "error": str(error)}) + "\\n")
`;

/** Lines that are no address at all, as a log holds a few. */
const INVALID = ["1.2.3", "999.1.1.1", "not-an-address", "2001:db8::g", "8.8.8.8/24", "::1::2"];
/** Private and other reserved addresses: valid, never in a database. */
const RESERVED = ["10.1.2.3", "192.168.0.10", "172.16.5.4", "127.0.0.1", "fd00::1", "100.64.1.1"];

/** The mix, in shares of the lines (the rest, 1%, reserved addresses). */
export const MIX = { knownIpv4: 0.89, randomIpv6: 0.09, invalid: 0.01 } as const;

/**
 * `lines` lines of the mix a log has: 89% random public IPv4 addresses the
 * City database knows (drawn uniformly over the whole space, so nearly all
 * distinct), 9% random public IPv6 addresses (2000::/3, not reserved: most
 * unknown to any database, as scanners' are), 1% invalid lines and 1%
 * reserved addresses. The same for the same seed.
 */
export async function mixedLines(lines: number, seed = 2222): Promise<string[]> {
  const manifest = await readManifest(DATA_DIR);
  const entry = manifest?.sources.find((s) => s.kind === "city");
  if (!entry) throw new Error(`No City database in ${DATA_DIR}: run "deno task data"`);
  const bytes = await Deno.readFile(`${DATA_DIR}/${entry.file}`);
  // mmdb-lib's own reader decides "known", not ipintel's.
  const city = new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  const random = seededRandom(seed);
  const u32 = () => Math.floor(random() * 4294967296);
  const knownIpv4 = (): string => {
    for (;;) {
      const v = u32();
      const ip = `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
      if (reservedRangeName(parseIp(ip)) === null && city.get(ip) !== null) return ip;
    }
  };
  const randomIpv6 = (): string => {
    for (;;) {
      const groups = Array.from({ length: 8 }, () => u32() & 0xffff);
      groups[0] = 0x2000 | (groups[0]! & 0x1fff); // 2000::/3, global unicast
      const ip = parseIp(groups.map((g) => g.toString(16)).join(":")).address;
      if (reservedRangeName(parseIp(ip)) === null) return ip;
    }
  };
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const r = random();
    if (r < MIX.knownIpv4) out.push(knownIpv4());
    else if (r < MIX.knownIpv4 + MIX.randomIpv6) out.push(randomIpv6());
    else if (r < MIX.knownIpv4 + MIX.randomIpv6 + MIX.invalid) {
      out.push(INVALID[i % INVALID.length]!);
    } else out.push(RESERVED[i % RESERVED.length]!);
  }
  return out;
}

/** A valid address outside every reserved range. */
function isPublic(line: string): boolean {
  try {
    return reservedRangeName(parseIp(line)) === null;
  } catch {
    return false; // invalid
  }
}

/** The input file: LINES lines of the mix; returns a sample of known addresses (for mmdblookup). */
async function writeInput(path: string): Promise<string[]> {
  const lines = await mixedLines(LINES);
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return lines.filter((line) => /^\d+\.\d+\.\d+\.\d+$/.test(line) && isPublic(line));
}

/** Addresses per second of wall-clock time, and per second of CPU time. */
interface Rate {
  wall: number;
  cpu: number;
}

/**
 * Runs a command (under /usr/bin/time, for its CPU time) with `input` as
 * stdin; counts its output lines, which must be one per input line.
 */
async function timed(
  command: string,
  args: string[],
  input: string,
  env: Record<string, string> = {},
): Promise<Rate & { cpuSeconds: number }> {
  const run = await timedRun(command, args, input, env, LINES);
  return { wall: LINES / run.seconds, cpu: LINES / run.cpuSeconds, cpuSeconds: run.cpuSeconds };
}

/**
 * Runs a command under /usr/bin/time with the file `input` as its stdin: its
 * wall and CPU (user + system) seconds. Throws unless it succeeds and writes
 * `lines` lines (counted as they come, natively: the bench takes little of the
 * CPU the contenders share).
 */
export async function timedRun(
  command: string,
  args: string[],
  input: string,
  env: Record<string, string>,
  lines: number,
): Promise<{ seconds: number; cpuSeconds: number }> {
  const file = await Deno.open(input);
  const times = await Deno.makeTempFile();
  const started = performance.now();
  const child = new Deno.Command("/usr/bin/time", {
    args: ["-o", times, "-f", "%U %S", command, ...args],
    cwd: ROOT,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const feeding = file.readable.pipeTo(child.stdin).catch(() => {});
  const written = await countLines(child.stdout);
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
    feeding,
  ]);
  const seconds = (performance.now() - started) / 1000;
  if (!status.success || written !== lines) {
    throw new Error(
      `${command} ${args.join(" ")}: exit ${status.code}, ${written} lines\n${stderr}`,
    );
  }
  const [user, system] = (await Deno.readTextFile(times)).trim().split(/\s+/).map(Number);
  await Deno.remove(times);
  return { seconds, cpuSeconds: user! + system! };
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSecondsOf(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
}

async function countLines(stream: ReadableStream<Uint8Array>): Promise<number> {
  let lines = 0;
  for await (const chunk of stream) {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
  }
  return lines;
}

/** mmdblookup on a sample: two processes (City, ASN) per address, as a shell loop would run it. */
async function mmdblookup(sample: string[], city: string, asn: string): Promise<number> {
  const started = performance.now();
  for (const ip of sample) {
    for (const file of [city, asn]) {
      const { code } = await new Deno.Command("mmdblookup", {
        args: ["--file", file, "--ip", ip],
        stdout: "null",
        stderr: "null",
      }).output();
      // 6: no entry for the address (the ASN database lacks some the City one has).
      if (code !== 0 && code !== 6) throw new Error(`mmdblookup failed for ${ip}`);
    }
  }
  return sample.length / ((performance.now() - started) / 1000);
}

/** The server's resident memory over one stream, in MB. */
interface Memory {
  before: number;
  max: number;
  /** Lowest and highest after the first tenth of the stream: how flat it stays as it goes. */
  laterMin: number;
  laterMax: number;
}

function memoryOf(before: number, samples: [number, number][], ms: number): Memory {
  const later = samples.filter(([t]) => t >= ms / 10).map(([, mb]) => mb);
  return {
    before,
    max: Math.max(before, ...samples.map(([, mb]) => mb)),
    laterMin: Math.min(...later),
    laterMax: Math.max(...later),
  };
}

/**
 * A client that sends its whole body before it reads the answer, as Python's
 * urllib does (and requests, and most simple clients): the answer to stdout.
 */
const PYTHON_CLIENT = `
import sys, urllib.request
request = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], "rb"), method="POST",
    headers={"Content-Type": "text/plain", "Content-Length": sys.argv[3]})
with urllib.request.urlopen(request, timeout=120) as response:
    while True:
        chunk = response.read(1 << 20)
        if not chunk:
            break
        sys.stdout.buffer.write(chunk)
`;

/** An HTTP client: the command and its arguments for a URL and the input file. */
type Client = (url: string, input: string) => [string, string[]];

const curl: Client = (url, input) => [
  "curl",
  ["-sS", "--fail", "-H", "content-type: text/plain", "--data-binary", `@${input}`, url],
];

/**
 * The streamed HTTP answer through `client`; samples the server's memory meanwhile.
 * The CPU rate counts the server's CPU time only (the client's is reported apart).
 */
async function http(
  port: number,
  pid: number,
  input: string,
  warmUp: string,
  client: Client,
): Promise<Rate & { curlCpu: number; rss: Memory; idle: number }> {
  // An idle server gives heap back; a short stream first takes it to its working size again.
  const idle = rssMb(pid);
  const warming = await fetch(`http://127.0.0.1:${port}/bulk?format=ndjson`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: (await Deno.open(warmUp)).readable,
  });
  await warming.body?.pipeTo(new WritableStream());
  const before = rssMb(pid);
  const cpuBefore = cpuSecondsOf(pid);
  const started = performance.now();
  const samples: [number, number][] = [];
  const sampler = setInterval(() => samples.push([performance.now() - started, rssMb(pid)]), 100);
  try {
    const [command, args] = client(`http://127.0.0.1:${port}/bulk?format=ndjson`, input);
    const result = await timed(command, args, "/dev/null");
    return {
      wall: result.wall,
      cpu: LINES / (cpuSecondsOf(pid) - cpuBefore),
      curlCpu: result.cpuSeconds,
      rss: memoryOf(before, samples, performance.now() - started),
      idle,
    };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const python = await pythonWith("import maxminddb.extension");
  if (!python) throw new Error("python3-maxminddb (with its C extension) is not installed");
  const manifest = await readManifest(DATA_DIR);
  const fileOf = (kind: string) =>
    `${DATA_DIR}/${manifest!.sources.find((s) => s.kind === kind)!.file}`;
  const [cityDb, asnDb] = [fileOf("city"), fileOf("asn")];

  const dir = await Deno.makeTempDir({ prefix: "ipintel-stream-bench-" });
  try {
    const input = `${dir}/addresses.txt`;
    const script = `${dir}/reader.py`;
    await Deno.writeTextFile(script, PYTHON_READER);
    const pool = await writeInput(input);
    const warmUp = `${dir}/warm-up.txt`;
    const text = await Deno.readTextFile(input);
    await Deno.writeTextFile(warmUp, text.slice(0, text.indexOf("\n", text.length / 10) + 1));
    const sample = pool.slice(0, MMDBLOOKUP_SAMPLE);
    const clientScript = `${dir}/client.py`;
    await Deno.writeTextFile(clientScript, PYTHON_CLIENT);
    const size = String((await Deno.stat(input)).size);
    const urllib: Client = (url, file) => [python, [clientScript, url, file, size]];
    const server = await startServer(dir, ["--workers", "1"]);
    // A fresh server's first long stream also fills its record caches (IPINTEL_CACHE_SIZE
    // records per database, a fixed bound): measured once, apart from the rounds.
    const first = await http(server.port, server.child.pid, input, warmUp, curl);
    const rows: {
      python: Rate;
      cli: Rate;
      http: Rate;
      urllib: Rate;
      mmdb: number;
      curlCpu: number;
    }[] = [];
    const memory: (Memory & { idle: number })[] = [];
    try {
      const { cores } = await machineLoad(async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const py = await timed(python, [script, cityDb, asnDb], input);
          const cli = await timed(Deno.execPath(), ["run", "-A", "main.ts", "lookup", "-"], input, {
            IPINTEL_DATA_DIR: DATA_DIR,
          });
          const web = await http(server.port, server.child.pid, input, warmUp, curl);
          const uploadFirst = await http(server.port, server.child.pid, input, warmUp, urllib);
          const mmdb = await mmdblookup(sample, cityDb, asnDb);
          rows.push({
            python: py,
            cli,
            http: web,
            urllib: uploadFirst,
            mmdb,
            curlCpu: web.curlCpu,
          });
          memory.push({ ...web.rss, idle: web.idle }, {
            ...uploadFirst.rss,
            idle: uploadFirst.idle,
          });
          const show = (r: Rate) => `${r.wall.toFixed(0)}/s (CPU ${r.cpu.toFixed(0)}/s)`;
          console.error(
            `round ${round + 1}: python ${show(py)}, cli ${show(cli)}, http (curl) ${
              show(web)
            }, http (urllib, upload first) ${show(uploadFirst)}, mmdblookup ${
              mmdb.toFixed(0)
            }/s, server RSS ${web.rss.before.toFixed(0)} → max ${web.rss.max.toFixed(0)} MB`,
          );
        }
      });
      const col = (pick: (r: typeof rows[0]) => number) => median(rows.map(pick));
      const line = (name: string, pick: (r: typeof rows[0]) => Rate, goal: string) =>
        console.log(
          `| ${name} | ${col((r) => pick(r).wall).toFixed(0)} | ${
            col((r) => pick(r).wall / r.python.wall).toFixed(2)
          } | ${col((r) => pick(r).cpu).toFixed(0)} | ${
            col((r) => pick(r).cpu / r.python.cpu).toFixed(2)
          } | ${goal} |`,
        );
      console.log(
        `${LINES} lines (89% random public IPv4 the City database knows, 9% random public IPv6, 1% invalid, 1% reserved); ` +
          `${ROUNDS} interleaved rounds; medians, ratios taken within each round. Machine shared: ${
            cores.toFixed(2)
          } of ${navigator.hardwareConcurrency} cores busy on average, this bench included.`,
      );
      console.log(
        "| contender | addresses/s (wall) | × Python | addresses per CPU-second | × Python | goal |",
      );
      console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
      line("Python maxminddb (C extension), City + ASN, JSON lines", (r) => r.python, "");
      line("ipintel lookup - (full answer, NDJSON; start-up included)", (r) => r.cli, "≥ 4");
      line(
        "ipintel POST /bulk?format=ndjson read by curl, 1 worker (CPU: the server's)",
        (r) => r.http,
        "≥ 2",
      );
      line(
        "ipintel POST /bulk?format=ndjson read by Python urllib (upload first), 1 worker (CPU: the server's)",
        (r) => r.urllib,
        "≥ 2",
      );
      console.log(
        `| mmdblookup, City + ASN (2 processes per address, ${MMDBLOOKUP_SAMPLE}-address sample) | ${
          col((r) => r.mmdb).toFixed(0)
        } | ${col((r) => r.mmdb / r.python.wall).toFixed(3)} | | | |`,
      );
      console.log(`curl's own CPU time per stream: ${col((r) => r.curlCpu).toFixed(1)} s (median)`);
      const growth = Math.max(...memory.map((m) => m.max - m.before));
      console.log(
        `server RSS per measured stream (MB): ${
          memory.map((m) =>
            `idle ${m.idle.toFixed(0)}, after a ${
              (LINES / 10).toLocaleString("en")
            }-line warm-up stream ${m.before.toFixed(0)}, during the stream ${
              m.laterMin.toFixed(0)
            }–${m.max.toFixed(0)}`
          ).join("; ")
        }.`,
      );
      console.log(
        `server RSS rise over a ${LINES.toLocaleString("en")}-address stream: ${
          growth.toFixed(1)
        } MB at most over the measured streams (goal: ≤ 50; curl's and urllib's alternate); ` +
          `the first stream after start rose ${(first.rss.max - first.rss.before).toFixed(1)} MB (${
            first.rss.before.toFixed(0)
          } → ${first.rss.max.toFixed(0)}: it also fills the record caches, IPINTEL_CACHE_SIZE ` +
          `records per database). Server started with ${
            SERVER_V8_FLAGS.join(" ") || "no V8 flags"
          } (deno.json's start task).`,
      );
    } finally {
      await server.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
