/**
 * Memory and time of compiling one big IPv4 list (the `ip-list` format, one
 * random address a line, as a hostile or just large source would send): a
 * fresh process reads the list's file, then parses it and compiles the kind's
 * tree as an update does. Reported: its resident memory once the text is read
 * (base), its peak (VmHWM), and the rise per entry, with and without the
 * output tree (which the server holds anyway once it loads the tree). Each
 * size runs in its own process so one peak does not hide another.
 *
 * Run: `deno task bench:feed`. Environment: BENCH_FEED_MB (sizes in MB of
 * IPv4 list text, comma-separated; default "4,16,64": 64 MB is the list cap)
 * and BENCH_FEED_V6_MB (the same for IPv6 lists, the costliest tree; default
 * "16"; empty for none).
 *
 * @module
 */

import { compileFeeds } from "../src/data/update/feed_compile.ts";
import { parseFeed } from "../src/data/update/feed_parse.ts";
import { randomIpv4List, randomIpv6List } from "../tests/data/update/_big_list.ts";

const MB = 1_000_000;

/** `VmHWM` and `VmRSS` of this process, in bytes (Linux). */
function memory(): { peak: number; rss: number } {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { peak: kb("VmHWM"), rss: kb("VmRSS") };
}

/** Parses and compiles the list in `path`, as an update does with a downloaded list. */
async function child(path: string): Promise<void> {
  const text = await Deno.readTextFile(path);
  const before = memory();
  const started = performance.now();
  const feed = parseFeed("ip-list", text, "big");
  const parsed = performance.now();
  let treeBytes = 0;
  let refused: string | null = null;
  try {
    treeBytes = compileFeeds("threat", [{ name: "big", feed }]).tree!.length;
  } catch (error) {
    refused = (error as Error).message;
  }
  const done = performance.now();
  const after = memory();
  console.log(JSON.stringify({
    entries: feed.count,
    treeBytes,
    refused,
    baseRss: before.rss,
    peak: after.peak,
    parseMs: parsed - started,
    compileMs: done - parsed,
  }));
}

async function main(): Promise<void> {
  const runs = [
    ...sizes("BENCH_FEED_MB", "4,16,64").map((mb) => ({ family: "v4", mb })),
    ...sizes("BENCH_FEED_V6_MB", "16").map((mb) => ({ family: "v6", mb })),
  ];
  const load = Deno.loadavg()[0]!.toFixed(2);
  console.log(`feed compile: one random ip-list per size, a fresh process each (load ${load})`);
  console.log(
    "list    entries  tree MB  base MB  peak MB  peak-base MB  B/entry  B/entry w/o tree  parse s  compile s",
  );
  for (const { family, mb } of runs) {
    const path = await Deno.makeTempFile({ prefix: "feed-bench-", suffix: ".txt" });
    try {
      const list = family === "v4" ? randomIpv4List(mb * MB) : randomIpv6List(mb * MB);
      await Deno.writeTextFile(path, list);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", import.meta.filename!, "--child", path],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      if (!out.success) {
        console.log(`${family} ${mb} MB: the child failed (exit ${out.code})`);
        continue;
      }
      const r = JSON.parse(new TextDecoder().decode(out.stdout));
      const over = r.peak - r.baseRss;
      console.log(
        [
          `${family} ${mb}`.padEnd(7),
          `${r.entries}`.padEnd(8),
          (r.refused ? "refused" : (r.treeBytes / MB).toFixed(1)).padEnd(8),
          (r.baseRss / MB).toFixed(0).padEnd(8),
          (r.peak / MB).toFixed(0).padEnd(8),
          (over / MB).toFixed(0).padEnd(13),
          (over / r.entries).toFixed(0).padEnd(8),
          ((over - r.treeBytes) / r.entries).toFixed(0).padEnd(17),
          (r.parseMs / 1000).toFixed(1).padEnd(8),
          (r.compileMs / 1000).toFixed(1),
        ].join(" "),
      );
      if (r.refused) console.log(`        refused: ${r.refused}`);
    } finally {
      await Deno.remove(path);
    }
  }
}

function sizes(variable: string, fallback: string): number[] {
  const text = Deno.env.get(variable) ?? fallback;
  return text === "" ? [] : text.split(",").map(Number);
}

if (Deno.args[0] === "--child") await child(Deno.args[1]!);
else if (import.meta.main) await main();
