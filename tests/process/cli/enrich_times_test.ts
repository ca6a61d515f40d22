/**
 * `ipintel enrich` with record times, partial answers and impossible travel, as
 * a user runs it on the real default data (no security list: no list history).
 */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { runCli } from "../../_cli.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

const ENV = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" };

Deno.test("ipintel enrich: a Shopify export's `2026-10-28 00:00:00 +0000`, epoch ms and epoch s as text are times; every row keeps its country", async () => {
  const csv = "Name,Created At,Browser IP\n" +
    "#1001,2026-10-28 00:00:00 +0000,8.8.8.8\n" +
    "#1002,1764320000000,81.2.69.142\n" +
    "#1003,1764320000,1.1.1.1\n" +
    "#1004,31/02/2026,8.8.8.8\n";
  const run = await runCli(
    [
      "enrich",
      "--input",
      "csv",
      "--column",
      "Browser IP",
      "--time-column",
      "Created At",
      "--get",
      "countryCode,asn_number,isTor",
    ],
    ENV,
    60_000,
    csv,
  );
  assert.equal(run.code, 0, run.stderr);
  const rows: string[][] = parse(run.stdout);
  assert.deepEqual(rows.map((r) => r[3]), ["ip_countryCode", "US", "GB", "AU", "US"]);
  for (const row of rows.slice(1, 4)) {
    assert.match(row[6]!, /^No list history is kept on this server, so at \d{4}-/, row[0]);
  }
  assert.match(
    rows[4]![6]!,
    /^Invalid time "31\/02\/2026": not one of the forms read; expected .*epoch seconds/,
  );
  assert.match(
    run.stderr,
    /^ipintel enrich: 4 records, 4 enriched \(4 without security and risk: time outside the list history: 3, unreadable time: 1\), 0 failed in [\d.]+ s/,
  );
});

Deno.test("ipintel enrich: pino's epoch-ms `time` in NDJSON; --at before the history still answers countryCode", async () => {
  const pino = '{"level":30,"time":1764320000000,"msg":"login","ip":"8.8.8.8"}\n' +
    '{"level":30,"time":1764320000123,"msg":"login","ip":"1.1.1.1"}\n';
  const run = await runCli(
    ["enrich", "--time-field", "time", "--get", "countryCode"],
    ENV,
    60_000,
    pino,
  );
  assert.equal(run.code, 0, run.stderr);
  const answers = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line).ipintel);
  assert.deepEqual(answers.map((a) => a.countryCode), ["US", "AU"]);
  assert.match(answers[0].error, /at 2025-11-28T08:53:20\.000Z cannot be answered/);
  assert.match(answers[1].error, /at 2025-11-28T08:53:20\.123Z cannot be answered/);

  const at = await runCli(
    ["enrich", "--input", "csv", "--at", "2026-11-01", "--get", "countryCode"],
    ENV,
    60_000,
    "ip\n8.8.8.8\n",
  );
  assert.equal(at.code, 0, at.stderr);
  assert.deepEqual((parse(at.stdout) as string[][])[1]!.slice(0, 2), ["8.8.8.8", "US"]);
  assert.match(at.stderr, /1 records, 1 enriched \(1 without security and risk: .*\), 0 failed/);
});

Deno.test("ipintel enrich: bad time options are usage errors naming the value", async () => {
  const cases: [string[], RegExp][] = [
    [["--time-zone", "Mars/Olympus"], /Invalid --time-zone "Mars\/Olympus": expected an IANA/],
    [
      ["--at", "yesterday"],
      /--at: Invalid time "yesterday": not one of the forms read; expected .*epoch/,
    ],
    [["--at", "2099-01-01"], /--at "2099-01-01" is in the future/],
    [["--travel-key", "user"], /--travel-key needs each record's time/],
    [["--travel-speed", "900"], /--travel-speed needs --travel-key/],
    [
      ["--travel-key", "user", "--time-column", "ts", "--travel-speed", "0"],
      /Invalid --travel-speed "0"/,
    ],
    [
      ["--travel-key", "user", "--time-column", "ts", "--travel-subjects", "1.5"],
      /Invalid --travel-subjects "1\.5": expected a whole number above 0/,
    ],
  ];
  for (const [flags, message] of cases) {
    const run = await runCli(["enrich", ...flags], ENV, 60_000, "ip\n8.8.8.8\n");
    assert.equal(run.code, 2, flags.join(" "));
    assert.match(run.stderr, message, flags.join(" "));
  }
  const noKey = await runCli(
    ["enrich", "--time-column", "ts", "--travel-key", "user"],
    ENV,
    60_000,
    "ts,ip\n1764320000,8.8.8.8\n",
  );
  assert.equal(noKey.code, 1);
  assert.match(noKey.stderr, /No column "user" in the header for --travel-key/);
});

Deno.test("ipintel enrich --travel-key: impossible travel per user, the summary with the default bound; a small bound forgets", async () => {
  const csv = "user,ts,ip\n" +
    "alice,2026-11-20T08:00:00Z,8.8.8.8\n" +
    "bob,2026-11-20T08:00:00Z,8.8.8.8\n" +
    "alice,2026-11-20T08:10:00Z,81.2.69.142\n" +
    "bob,2026-11-20T09:00:00Z,8.8.4.4\n" +
    "carol,2026-11-20T10:00:00Z,8.8.4.4\n";
  const args = ["enrich", "--time-column", "ts", "--travel-key", "user", "--get", "countryCode"];
  const run = await runCli(args, ENV, 60_000, csv);
  assert.equal(run.code, 0, run.stderr);
  const rows: string[][] = parse(run.stdout);
  assert.deepEqual(rows[0]!.slice(3), [
    "ip_countryCode",
    "ip_travel_km",
    "ip_travel_kmh",
    "ip_impossible_travel",
    "ip_error",
  ]);
  assert.deepEqual(rows.slice(1).map((r) => r.slice(4, 7)), [
    ["", "", ""],
    ["", "", ""],
    ["7286.1", "36517", "true"],
    ["2183.6", "0", "false"],
    ["", "", ""],
  ]);
  assert.match(
    run.stderr,
    /\nipintel enrich: travel: 2 records judged, 1 impossible \(over 1000 km\/h\); 3 subjects remembered, 0 forgotten \(at most 1000000\)\n$/,
  );
  const small = await runCli(
    [...args, "--travel-subjects", "1", "--travel-speed", "50000"],
    ENV,
    60_000,
    csv,
  );
  assert.equal(small.code, 0, small.stderr);
  assert.deepEqual(parse(small.stdout).slice(1).map((r: string[]) => r[6]), ["", "", "", "", ""]);
  assert.match(
    small.stderr,
    /travel: 0 records judged, 0 impossible \(over 50000 km\/h\); 1 subjects remembered, 4 forgotten \(at most 1\)/,
  );
});

Deno.test("ipintel enrich --travel-key with workers: the same output and counts as one isolate", async () => {
  // About 2 MB: past the chunks read before the workers start (enrich.ts POOL_AFTER_CHUNKS).
  const ips = ["8.8.8.8", "81.2.69.142", "8.8.4.4", "1.1.1.1", "8.8.8.x", "2a02:ec0:1::9"];
  const rows = ["user,ts,ip,note\n"];
  for (let i = 0; i < 40_000; i++) {
    // A few busy users (each seen every 50 rows) and many more than the bound.
    const user = i % 13 === 0 ? "" : i % 2 ? `busy${i % 50}` : `user${(i * 7919) % 3001}`;
    // A busy user's next record (25 minutes on) is across the Atlantic.
    const ip = i % 2 ? (Math.floor(i / 50) % 2 ? "8.8.8.8" : "81.2.69.142") : ips[i % ips.length];
    rows.push(`${user},${1790000000 + i * 30},${ip},note ${i} padding padding\n`);
  }
  const csv = rows.join("");
  const args = [
    "enrich",
    "--time-column",
    "ts",
    "--travel-key",
    "user",
    "--travel-subjects",
    "2000",
    "--get",
    "countryCode",
  ];
  const alone = await runCli(args, { ...ENV, IPINTEL_WORKERS: "1" }, 120_000, csv);
  const pooled = await runCli(args, { ...ENV, IPINTEL_WORKERS: "2" }, 120_000, csv);
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(pooled.code, 0, pooled.stderr);
  assert.match(pooled.stderr, / with 2 workers\n/);
  assert.equal(pooled.stdout, alone.stdout);
  const summary = (stderr: string) =>
    stderr.replace(/ in [\d.]+ s, \d+ records\/s( with 2 workers)?/, "");
  assert.equal(summary(pooled.stderr), summary(alone.stderr));
  assert.match(
    alone.stderr,
    /travel: \d+ records judged, [1-9]\d* impossible .* [1-9]\d* forgotten \(at most 2000\)/,
  );
});
