/** `ipintel enrich`'s doors as a user meets them (issues 47 and 48), on the real default data. */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { runCli, spawnCli } from "../../_cli.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";
import { STREAM_CACHE_SIZE } from "../../../src/process/cli/lookup.ts";

const ENV = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" };

const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

Deno.test("ipintel enrich: a stray quote on row 2 costs one row, alone and with workers", async () => {
  const rows = ["n,ip,note\n"];
  const count = 80_000; // about 2 MB: workers take over after the first chunks
  for (let i = 0; i < count; i++) {
    rows.push(`${i},${i % 2 ? "8.8.8.8" : "1.1.1.1"},${i === 1 ? 'say "hi' : "fine"}\n`);
  }
  const csv = rows.join("");
  const args = ["enrich", "--get", "countryCode"];
  const alone = await runCli(args, { ...ENV, IPINTEL_WORKERS: "1" }, 120_000, csv);
  const pooled = await runCli(args, { ...ENV, IPINTEL_WORKERS: "2" }, 120_000, csv);
  for (const run of [alone, pooled]) {
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`${count} records, ${count - 1} enriched, 1 failed \\(record too long: 1\\)`),
    );
  }
  assert.equal(pooled.stdout, alone.stdout);
  const lines = alone.stdout.split("\n");
  assert.equal(lines.length, count + 2);
  assert.ok(lines[2]!.startsWith('1,8.8.8.8,say "hi,,"Record longer than 1 MiB'), lines[2]);
  assert.equal(lines[3], "2,1.1.1.1,fine,AU,");
});

Deno.test("ipintel enrich keeps a file's byte-order mark and reads the header behind it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/bom.csv`;
    await Deno.writeTextFile(path, "\uFEFFip,note\r\n8.8.8.8,x\r\n");
    // Bytes, not text: a decoder would drop the mark (as enrich's own used to).
    const run = await spawnCli(["enrich", path, "--get", "countryCode"], ENV).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    assert.deepEqual(
      [...run.stdout],
      [...new TextEncoder().encode("\uFEFFip,note,ip_countryCode,ip_error\r\n8.8.8.8,x,US,\r\n")],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ipintel enrich on standard input: a CSV header is read as CSV, anything unknown asks for --input", async () => {
  const csv = await runCli(["enrich"], ENV, 60_000, "time,client_ip\n1,8.8.8.8\n2,1.1.1.1\n");
  assert.equal(csv.code, 1);
  assert.match(
    csv.stderr,
    /No column "ip" in the header \(time, client_ip\): name it with --column/,
  );
  const named = await runCli(
    ["enrich", "--column", "client_ip", "--get", "countryCode"],
    ENV,
    60_000,
    "time,client_ip\n1,8.8.8.8\n",
  );
  assert.equal(named.code, 0, named.stderr);
  assert.equal(named.stdout, "time,client_ip,ip_countryCode,ip_error\n1,8.8.8.8,US,\n");
  const unknown = await runCli(["enrich"], ENV, 60_000, "hello there\nworld\n");
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Cannot tell what standard input holds: .*--input.*--column/);
});

Deno.test("ipintel enrich --help shows the defaults enrich uses, the record bound and the user-agent flags", async () => {
  const help = await runCli(["enrich", "--help"], ENV, 60_000);
  assert.equal(help.code, 0);
  assert.match(
    help.stdout,
    new RegExp(`--cache-size\\s+IPINTEL_CACHE_SIZE\\s+${STREAM_CACHE_SIZE}\\s`),
  );
  assert.match(help.stdout, /longer than 1 MiB/);
  assert.match(help.stdout, /--ua-column <name>/);
  assert.match(help.stdout, /--ua-field <path>/);
});

Deno.test("ipintel enrich fills userAgent from an access log's own, and from --ua-column", async () => {
  const log = `8.8.8.8 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 612 "-" "${CHROME}"\n`;
  const access = await runCli(["enrich", "--get", "countryCode,userAgent"], ENV, 60_000, log);
  assert.equal(access.code, 0, access.stderr);
  const record = JSON.parse(access.stdout);
  assert.equal(record.ipintel.userAgent.browser.name, "Chrome");
  assert.equal(record.ipintel.countryCode, "US");
  const whole = await runCli(["enrich"], ENV, 60_000, log);
  assert.equal(JSON.parse(whole.stdout).ipintel.userAgent.browser.name, "Chrome");
  const csv = `ip,agent\n8.8.8.8,"${CHROME}"\n`;
  const table = await runCli(
    ["enrich", "--ua-column", "agent", "--get", "userAgent.browser"],
    ENV,
    60_000,
    csv,
  );
  assert.equal(table.code, 0, table.stderr);
  const rows: Record<string, string>[] = parse(table.stdout, { columns: true });
  assert.equal(rows[0]!["ip_browser.name"] ?? rows[0]!["ip_userAgent.browser.name"], "Chrome");
});

Deno.test("ipintel enrich answers in one isolate unless workers are set: they cost memory and were slower on logs (issue 49)", async () => {
  // About 3 MB of log: past the first MB, where set workers take over.
  const lines = [];
  for (let i = 0; i < 20_000; i++) {
    lines.push(
      `${
        i % 2 ? "8.8.8.8" : "1.1.1.1"
      } - - [10/Oct/2026:13:55:36 +0000] "GET /${i} HTTP/1.1" 200 ${i} "-" "${CHROME}"\n`,
    );
  }
  const log = lines.join("");
  const args = ["enrich", "--get", "countryCode"];
  const byDefault = await runCli(args, ENV, 120_000, log);
  const set = await runCli([...args, "--workers", "2"], ENV, 120_000, log);
  assert.equal(byDefault.code, 0, byDefault.stderr);
  assert.equal(set.code, 0, set.stderr);
  assert.match(
    byDefault.stderr,
    /20000 records, 20000 enriched, 0 failed in [\d.]+ s, \d+ records\/s\n$/,
  );
  assert.match(set.stderr, / with 2 workers\n$/);
  assert.equal(set.stdout, byDefault.stdout);
});
