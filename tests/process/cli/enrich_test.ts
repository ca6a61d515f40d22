/** `ipintel enrich` as a user runs it, on the real default data. */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { runCli } from "../../_cli.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

const ENV = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" };

Deno.test("ipintel enrich: a 3-row CSV, a 3-line NDJSON and a 3-line combined log, each with one invalid address", async () => {
  const csv = "when,client_ip,user\n2026-11-01T10:00:00Z,8.8.8.8,alice\n" +
    '2026-11-01T10:00:01Z,8.8.8.x,bob\n2026-11-01T10:00:02Z,1.1.1.1,"carol, jr"\n';
  const table = await runCli(
    ["enrich", "--column", "client_ip", "--get", "country,asn_org,security"],
    ENV,
    60_000,
    csv,
  );
  assert.equal(table.code, 0, table.stderr);
  const rows: string[][] = parse(table.stdout);
  assert.deepEqual(rows.map((r) => r.slice(0, 3)), parse(csv));
  assert.deepEqual(rows[0]!.slice(3), [
    "ip_country",
    "ip_asn_org",
    "ip_security.isVpn",
    "ip_security.isTor",
    "ip_security.isThreat",
    "ip_error",
  ]);
  assert.deepEqual(rows[1]!.slice(3, 5), ["United States", "Google LLC"]);
  assert.match(rows[2]![8]!, /^Invalid IP address "8\.8\.8\.x"/);
  assert.deepEqual(rows[3]!.slice(3, 5), ["Australia", "Cloudflare, Inc."]);
  assert.match(
    table.stderr,
    /ipintel enrich: 3 records, 2 enriched, 1 failed \(invalid address: 1\) in [\d.]+ s, \d+ records\/s/,
  );

  const ndjson = '{"@timestamp":"2026-11-01T10:00:00Z","source":{"ip":"8.8.8.8"}}\n' +
    '{"@timestamp":"2026-11-01T10:00:01Z","source":{"ip":"300.1.1.1"}}\n' +
    '{"@timestamp":"2026-11-01T10:00:02Z","source":{"ip":"2606:4700:4700::1111"}}\n';
  const stream = await runCli(
    ["enrich", "--input", "ndjson", "--field", "source.ip", "--get", "countryCode,asn_number"],
    ENV,
    60_000,
    ndjson,
  );
  assert.equal(stream.code, 0, stream.stderr);
  const lines = stream.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 3);
  assert.ok(lines[0]!.startsWith(ndjson.split("\n")[0]!.slice(0, -1)), "the line's text is kept");
  assert.deepEqual(JSON.parse(lines[0]!).ipintel, {
    ip: "8.8.8.8",
    countryCode: "US",
    asn_number: 15169,
  });
  assert.match(JSON.parse(lines[1]!).ipintel.error, /Invalid IP address "300\.1\.1\.1"/);
  assert.equal(JSON.parse(lines[2]!).ipintel.asn_number, 13335);

  const log =
    '8.8.8.8 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.5.0"\n' +
    '8.8.8 - - [10/Oct/2026:13:55:37 +0000] "GET /a HTTP/1.1" 404 9 "-" "curl/8.5.0"\n' +
    '1.1.1.1 - frank [10/Oct/2026:13:55:38 +0000] "POST /b HTTP/1.1" 200 2 "https://x/" "Mozilla/5.0"\n';
  const access = await runCli(["enrich", "--get", "countryCode"], ENV, 60_000, log);
  assert.equal(access.code, 0, access.stderr);
  const records = access.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(records.map((r) => r.line), log.trimEnd().split("\n"));
  assert.deepEqual(records[0].ipintel, { ip: "8.8.8.8", countryCode: "US" });
  assert.match(records[1].ipintel.error, /Invalid IP address "8\.8\.8"/);
  assert.deepEqual(records[2].ipintel, { ip: "1.1.1.1", countryCode: "AU" });
});

Deno.test("ipintel enrich exits 1 only when the input cannot be read; a bad flag is a usage error", async () => {
  const missing = await runCli(["enrich", "/nonexistent/file.csv"], ENV, 60_000);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cannot read \/nonexistent\/file\.csv/);
  const noColumn = await runCli(["enrich", "--input", "csv"], ENV, 60_000, "a,b\n1,2\n");
  assert.equal(noColumn.code, 1);
  assert.match(noColumn.stderr, /No column "ip" in the header \(a, b\): name it with --column/);
  const badGet = await runCli(["enrich", "--get", "nosuch"], ENV, 60_000, "");
  assert.equal(badGet.code, 2);
  assert.match(badGet.stderr, /Invalid --get/);
});

Deno.test("ipintel enrich with workers: a long input comes back as one isolate answers it, in order, counted alike", async () => {
  // About 3 MB: well past the chunks read before the workers start (enrich.ts POOL_AFTER_CHUNKS).
  const addresses = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "8.8.8.x", "", "10.0.0.1"];
  const rows = ["ts,client_ip,note\n"];
  for (let i = 0; i < 70_000; i++) {
    const note = i % 7 === 0 ? `"a ""quoted"", multi\nline note ${i}"` : `note ${i}`;
    rows.push(
      i % 101 === 0
        ? `short${i}\n`
        : `2026-11-01T10:00:${String(i % 60).padStart(2, "0")}Z,${
          addresses[i % addresses.length]
        },${note}\n`,
    );
  }
  const csv = rows.join("");
  const args = ["enrich", "--column", "client_ip", "--get", "country,asn_org,isTor"];
  const alone = await runCli(args, { ...ENV, IPINTEL_WORKERS: "1" }, 120_000, csv);
  const pooled = await runCli(args, { ...ENV, IPINTEL_WORKERS: "2" }, 120_000, csv);
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(pooled.code, 0, pooled.stderr);
  assert.equal(pooled.stdout, alone.stdout);
  assert.match(pooled.stderr, / records\/s with 2 workers\n$/);
  assert.match(alone.stderr, / records\/s\n$/);
  const summary = (stderr: string) =>
    stderr.replace(/ in [\d.]+ s, \d+ records\/s( with 2 workers)?/, "");
  assert.equal(summary(pooled.stderr), summary(alone.stderr));
  assert.match(alone.stderr, /70000 records, /);
  const parsed: string[][] = parse(pooled.stdout, { relaxColumnCount: true });
  const input: string[][] = parse(csv, { relaxColumnCount: true });
  assert.deepEqual(parsed.map((r) => r.slice(0, r.length - 4)), input.map((r) => r.slice(0, 3)));

  const ndjson = [...rows, ...rows].slice(1).map((_, i) =>
    i % 53 === 0 ? "{broken\n" : `{"n":${i},"ip":"${addresses[i % addresses.length]}"}\n`
  ).join("");
  const lines = ["enrich", "--input", "ndjson", "--get", "countryCode"];
  const ndAlone = await runCli(lines, { ...ENV, IPINTEL_WORKERS: "1" }, 120_000, ndjson);
  const ndPooled = await runCli(lines, { ...ENV, IPINTEL_WORKERS: "2" }, 120_000, ndjson);
  assert.equal(ndPooled.code, 0, ndPooled.stderr);
  assert.equal(ndPooled.stdout, ndAlone.stdout);
  assert.match(ndPooled.stderr, / with 2 workers\n$/);
  assert.equal(summary(ndPooled.stderr), summary(ndAlone.stderr));
});
