/**
 * Whether `ipintel enrich`'s own choice of workers pays on the inputs people
 * have (issue 49): an access log (combined format, a few dozen user agents),
 * a CSV and an NDJSON stream of bench:stream's address mix, at a few sizes,
 * each run with the default settings, with `--workers 1` and with `--workers 2`
 * (workers from the first MB on, as the default was), interleaved (default,
 * one, two, default, ...) over BENCH_ROUNDS rounds, ratios against one worker; medians of wall time
 * and peak RSS from /usr/bin/time, output to /dev/null. Also a CSV with a
 * stray quote on row 2 against the same CSV clean (issue 47: the record bound
 * keeps time and memory those of a clean run).
 *
 * BENCH_SIZES: MB, comma-separated (default 1,36,300); BENCH_KINDS: log, csv,
 * ndjson, stray (default all); BENCH_ROUNDS (default 3); BENCH_DIR: where the
 * inputs are written (default a directory under /tmp, kept and reused).
 *
 * Run: `deno run --allow-all bench/enrich_defaults.ts`.
 *
 * @module
 */

import { DATA_DIR, envInt, median } from "./_serve.ts";
import { mixedLines } from "./stream_bench.ts";

const ROUNDS = envInt("BENCH_ROUNDS", 3);
const SIZES = (Deno.env.get("BENCH_SIZES") ?? "1,36,300").split(",").map(Number);
const KINDS = (Deno.env.get("BENCH_KINDS") ?? "log,csv,ndjson,stray").split(",");
const DIR = Deno.env.get("BENCH_DIR") ?? "/tmp/ipintel-enrich-inputs";
const ROOT = new URL("..", import.meta.url);

const AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
  "curl/8.5.0",
  "python-requests/2.32.3",
  "Go-http-client/1.1",
];

/** One line of `kind` for address `ip`, the `i`th. */
function line(kind: string, ip: string, i: number): string {
  const second = String(i % 60).padStart(2, "0");
  switch (kind) {
    case "log":
      return `${ip} - - [28/Nov/2026:14:${
        String((i >> 6) % 60).padStart(2, "0")
      }:${second} +0000] ` +
        `"GET /articles/${i % 997}?page=${i % 7} HTTP/1.1" ${i % 23 ? 200 : 404} ${
          1000 + (i * 37) % 90_000
        } "https://example.com/" "${AGENTS[(i * 7) % AGENTS.length]}"\n`;
    case "ndjson":
      return `{"@timestamp":"2026-11-28T14:40:${second}Z","event":"login","user":"u${
        i % 5000
      }","source":{"ip":"${ip}"}}\n`;
    default:
      return `2026-11-28T14:40:${second}Z,u${i % 5000},${ip},${i % 23 ? "ok" : "denied"}\n`;
  }
}

/** The input of `kind` at about `mb` MB, written once (reused when present). */
export async function input(kind: string, mb: number): Promise<string> {
  const base = kind === "stray" || kind === "clean" ? "csv" : kind;
  const path = `${DIR}/${kind}-${mb}mb.${base === "log" ? "log" : base}`;
  try {
    await Deno.stat(path);
    return path;
  } catch { /* written below */ }
  await Deno.mkdir(DIR, { recursive: true });
  const target = mb * 1_000_000;
  // The mean length of a line over the user agents' cycle (the address: a typical IPv4 one).
  let perLine = 0;
  for (let i = 0; i < 100; i++) perLine += line(base, "203.0.113.77", i).length / 100;
  const addresses = await mixedLines(Math.ceil(target / perLine));
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  let text = base === "csv" ? "ts,user,client_ip,result\n" : "";
  for (let i = 0; i < addresses.length; i++) {
    let row = line(base, addresses[i]!, i);
    if (kind === "stray" && i === 1) row = row.replace(",ok", ',"ok'); // row 2: an open quote
    text += row;
    if (text.length > 1 << 20) {
      await file.write(encoder.encode(text));
      text = "";
    }
  }
  await file.write(encoder.encode(text));
  file.close();
  return path;
}

interface Run {
  wall: number;
  rssMb: number;
  summary: string;
}

/** One run of `enrich <path> <args>`, output to /dev/null: wall seconds, peak RSS, its summary. */
async function run(path: string, args: string[]): Promise<Run> {
  const times = await Deno.makeTempFile();
  const column = /\.csv$/.test(path) ? ["--column", "client_ip"] : [];
  const field = /\.ndjson$/.test(path) ? ["--field", "source.ip"] : [];
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-o",
      times,
      "-f",
      "%e %M",
      Deno.execPath(),
      "run",
      "-A",
      "main.ts",
      "enrich",
      path,
      ...column,
      ...field,
      ...args,
    ],
    cwd: ROOT,
    env: { IPINTEL_UPDATE_INTERVAL: "off", IPINTEL_DATA_DIR: DATA_DIR },
    stdout: "null",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`enrich ${path} ${args.join(" ")}: ${stderr}`);
  const [wall, rssKb] = (await Deno.readTextFile(times)).trim().split(/\s+/).map(Number);
  await Deno.remove(times);
  return { wall: wall!, rssMb: rssKb! / 1024, summary: stderr.trim().split("\n").at(-1)! };
}

function load(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}

if (import.meta.main) {
  console.log(`rounds ${ROUNDS}, load average at start ${load()}`);
  console.log(
    "| input | size | default: wall, peak RSS | `--workers 1` | time ÷ | RSS ÷ | `--workers 2` (from 1 MB) | time ÷ | RSS ÷ |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  const wall = (runs: Run[]) => median(runs.map((r) => r.wall));
  const rss = (runs: Run[]) => median(runs.map((r) => r.rssMb));
  const range = (runs: Run[]) =>
    `${Math.min(...runs.map((r) => r.wall)).toFixed(2)}–${
      Math.max(...runs.map((r) => r.wall)).toFixed(2)
    }`;
  const cell = (runs: Run[]) =>
    `${wall(runs).toFixed(2)} s (${range(runs)}), ${rss(runs).toFixed(0)} MB`;
  for (const kind of KINDS.filter((k) => k !== "stray")) {
    for (const mb of SIZES) {
      const path = await input(kind, mb);
      const byDefault: Run[] = [];
      const one: Run[] = [];
      const two: Run[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        byDefault.push(await run(path, []));
        one.push(await run(path, ["--workers", "1"]));
        two.push(await run(path, ["--workers", "2"]));
      }
      const ratios = (runs: Run[]) =>
        `${(wall(runs) / wall(one)).toFixed(2)} | ${(rss(runs) / rss(one)).toFixed(2)}`;
      console.log(
        `| ${kind} | ${((await Deno.stat(path)).size / 1e6).toFixed(1)} MB | ${cell(byDefault)} | ${
          cell(one)
        } | ${ratios(byDefault)} | ${cell(two)} | ${ratios(two)} |`,
      );
      for (const runs of [byDefault, one, two]) console.log(`  ${runs.at(-1)!.summary}`);
      console.log(`  (load ${load()})`);
    }
  }
  if (KINDS.includes("stray")) {
    // 1,500,000 rows (about 64 MB), clean and with an open quote on row 2; both ways of running.
    const clean = await input("clean", 64);
    const stray = await input("stray", 64);
    for (const args of [[], ["--workers", "1"]]) {
      const cleanRuns: Run[] = [];
      const strayRuns: Run[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        cleanRuns.push(await run(clean, args));
        strayRuns.push(await run(stray, args));
      }
      console.log(
        `| stray quote, ${args.join(" ") || "default"} | clean: ${cell(cleanRuns)} | stray: ${
          cell(strayRuns)
        } | ${(wall(strayRuns) / wall(cleanRuns)).toFixed(2)} | ${
          (rss(strayRuns) / rss(cleanRuns)).toFixed(2)
        } |`,
      );
      console.log(
        `  ${cleanRuns.at(-1)!.summary}\n  ${strayRuns.at(-1)!.summary}  (load ${load()})`,
      );
    }
  }
}
