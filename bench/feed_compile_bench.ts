/**
 * Memory and time of compiling one big IPv4 list (the `ip-list` format, one
 * random address a line, as a hostile or just large source would send): the
 * peak resident memory (VmHWM) of a fresh process that parses the text and
 * compiles the kind's tree, minus its resident memory before, divided by the
 * entries: the state bytes per entry. Each size runs in its own process so
 * one peak does not hide another.
 *
 * Run: `deno task bench:feed`. Environment: BENCH_FEED_MB (sizes in MB of list
 * text, comma-separated; default "4,16,64": 64 MB is the list cap).
 *
 * @module
 */

import { compileFeeds } from "../src/update/feed_compile.ts";
import { parseFeed } from "../src/update/feed_parse.ts";
import { randomIpv4List } from "../tests/update/_big_list.ts";

const MB = 1_000_000;

/** `VmHWM` and `VmRSS` of this process, in bytes (Linux). */
function memory(): { peak: number; rss: number } {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { peak: kb("VmHWM"), rss: kb("VmRSS") };
}

async function child(mb: number): Promise<void> {
  const text = randomIpv4List(mb * MB);
  const before = memory();
  const started = performance.now();
  const feed = parseFeed("ip-list", text, "big");
  const parsed = performance.now();
  const { tree } = compileFeeds("threat", [{ name: "big", feed }]);
  const done = performance.now();
  const after = memory();
  console.log(JSON.stringify({
    mb,
    entries: feed.count,
    textBytes: text.length,
    treeBytes: tree!.length,
    baseRss: before.rss,
    peak: after.peak,
    parseMs: parsed - started,
    compileMs: done - parsed,
  }));
}

async function main(): Promise<void> {
  const sizes = (Deno.env.get("BENCH_FEED_MB") ?? "4,16,64").split(",").map(Number);
  const load = Deno.loadavg()[0]!.toFixed(2);
  console.log(`feed compile: one random IPv4 ip-list per size, a fresh process each (load ${load})`);
  console.log("size  entries    tree MB  peak MB  over base MB  bytes/entry  parse s  compile s");
  for (const mb of sizes) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", import.meta.filename!, "--child", String(mb)],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!out.success) {
      console.log(`${mb} MB: the child failed (exit ${out.code})`);
      continue;
    }
    const r = JSON.parse(new TextDecoder().decode(out.stdout));
    const over = r.peak - r.baseRss;
    console.log(
      [
        `${r.mb}`.padEnd(5),
        `${r.entries}`.padEnd(10),
        (r.treeBytes / MB).toFixed(1).padEnd(8),
        (r.peak / MB).toFixed(0).padEnd(8),
        (over / MB).toFixed(0).padEnd(13),
        (over / r.entries).toFixed(0).padEnd(12),
        (r.parseMs / 1000).toFixed(1).padEnd(8),
        (r.compileMs / 1000).toFixed(1),
      ].join(" "),
    );
  }
}

if (Deno.args[0] === "--child") await child(Number(Deno.args[1]));
else if (import.meta.main) await main();
