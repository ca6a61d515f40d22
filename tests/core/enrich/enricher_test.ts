import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { Enricher, type EnrichOptions } from "../../../src/core/enrich/enricher.ts";
import { RecordSplitter } from "../../../src/core/enrich/csv_records.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { parseFieldSelection } from "../../../src/core/format/select.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { fixtureLookup } from "../../_helpers.ts";
import { seededRandom } from "../../_random.ts";
import { addCounts } from "../../../src/process/cli/enrich_pool.ts";

const randomInt = (random: () => number, n: number) => Math.floor(random() * n);
import {
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../../data/update/_feed_server.ts";

const BASE: EnrichOptions = {
  input: "csv",
  output: "ndjson",
  prefix: "ip_",
  into: "ipintel",
  selection: parseFieldSelection("country,asn_number,security"),
  lang: null,
  at: null,
};

/** Runs `text` through an enricher in chunks of `size` characters (all at once by default). */
function enrich(enricher: Enricher, text: string, size = text.length || 1): string {
  let out = "";
  for (let i = 0; i < text.length; i += size) out += enricher.push(text.slice(i, i + size));
  return out + enricher.end();
}

Deno.test("CSV: every row back in order and unchanged, the columns added, the invalid address flagged", async () => {
  const input = 'user,client_ip,note\r\nalice,81.2.69.142,"a, b"\r\nbob,81.2.69.999,x\r\n' +
    'carol,81.2.69.160,"said ""hi""\nthen left"\r\n';
  const enricher = new Enricher(await fixtureLookup(), {
    ...BASE,
    column: "client_ip",
  });
  const out = enrich(enricher, input);
  const rows: string[][] = parse(out, { relax_column_count: false });
  assert.deepEqual(rows[0], [
    "user",
    "client_ip",
    "note",
    "ip_country",
    "ip_asn_number",
    "ip_security.isVpn",
    "ip_security.isTor",
    "ip_security.isThreat",
    "ip_error",
  ]);
  const original: string[][] = parse(input);
  assert.equal(rows.length, original.length);
  for (const [i, row] of rows.entries()) {
    assert.deepEqual(row.slice(0, 3), original[i], `row ${i} keeps its fields`);
  }
  assert.equal(rows[1]![3], "United Kingdom");
  assert.match(rows[2]![8]!, /^Invalid IP address "81\.2\.69\.999"/);
  assert.deepEqual(rows[2]!.slice(3, 8), ["", "", "", "", ""]);
  assert.equal(rows[3]![3], "United Kingdom");
  assert.ok(out.startsWith("user,client_ip,note,"), "the header's own text is kept");
  assert.ok(out.includes('alice,81.2.69.142,"a, b",'), "a row's own text is kept");
  assert.deepEqual(enricher.counts, {
    records: 3,
    enriched: 2,
    partial: {},
    failed: { "invalid address": 1 },
  });
});

Deno.test("CSV: a short row and a missing address pass through with the reason; TSV with a prefix", async () => {
  const input = "ip\tts\tother\n81.2.69.142\n\t2026-01-01T00:00:00Z\tz\n";
  const enricher = new Enricher(await fixtureLookup(), {
    ...BASE,
    input: "tsv",
    prefix: "geo_",
    time: "ts",
    selection: parseFieldSelection("countryCode"),
  });
  const lines = enrich(enricher, input).split("\n");
  assert.equal(lines[0], "ip\tts\tother\tgeo_countryCode\tgeo_error");
  assert.equal(lines[1], "81.2.69.142\t\tShort row: fewer than 2 fields");
  assert.equal(lines[2], "\t2026-01-01T00:00:00Z\tz\t\tNo address in this record");
  assert.deepEqual(enricher.counts.failed, { "short row": 1, "no address": 1 });
});

Deno.test("CSV records split across chunks anywhere (quotes, CRLF, line breaks in fields) come back whole", async () => {
  const random = seededRandom(7);
  const lookup = await fixtureLookup();
  const pieces = ['"', ",", "\n", "\r\n", "a", "é", '""', " "];
  for (let round = 0; round < 60; round++) {
    const rows = [["id", "ip", "text"]];
    for (let r = 0; r < 1 + randomInt(random, 8); r++) {
      let text = "";
      for (let k = 0; k < randomInt(random, 12); k++) {
        text += pieces[randomInt(random, pieces.length)];
      }
      rows.push([String(r), r % 3 ? "81.2.69.142" : "bad", text]);
    }
    const quote = (f: string) => /[",\r\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f;
    const input = rows.map((row) => row.map(quote).join(",")).join("\r\n") + "\r\n";
    const enricher = new Enricher(lookup, {
      ...BASE,
      selection: parseFieldSelection("countryCode"),
    });
    const out = enrich(enricher, input, 1 + randomInt(random, 9));
    const parsed: string[][] = parse(out);
    assert.deepEqual(parsed.map((row) => row.slice(0, 3)), rows, `round ${round}`);
  }
});

Deno.test("RecordSplitter keeps a record open while a quote is, across chunks", () => {
  const splitter = new RecordSplitter();
  assert.deepEqual(splitter.push('a,"b\n'), []);
  assert.deepEqual(splitter.push('c",d\ne,f'), ['a,"b\nc",d\n']);
  assert.equal(splitter.end(), "e,f");
});

Deno.test("an engine resumed from another's position answers the records that one cuts, as that one would", async () => {
  const random = seededRandom(11);
  const lookup = await fixtureLookup();
  const options = { ...BASE, output: "csv" as const, column: "ip", time: "ts" };
  const rows = ["ts,ip,note\r\n"];
  for (let r = 0; r < 200; r++) {
    const ip = ["81.2.69.142", "2a02:ec0:1::9", "bad", ""][r % 4];
    const note = r % 5 ? `n${r}` : `"line\nbreak, ""quoted"""`;
    rows.push(r % 17 ? `2026-01-01T00:00:00Z,${ip},${note}\r\n` : `short\n`);
  }
  const input = rows.join("") + "2026-01-01T00:00:00Z,81.2.69.142,last"; // no final line break
  const whole = new Enricher(lookup, options);
  const expected = enrich(whole, input);
  for (let round = 0; round < 20; round++) {
    const main = new Enricher(lookup, options);
    let out = main.push(rows[0]!);
    const other = new Enricher(lookup, options, main.position()!);
    const rest = input.slice(rows[0]!.length);
    for (let i = 0; i < rest.length;) {
      const size = 1 + randomInt(random, 400);
      for (const piece of main.cut(rest.slice(i, i + size))) {
        out += typeof piece === "string" ? other.push(piece) + other.end() : piece.written;
      }
      i += size;
    }
    out += main.end();
    assert.equal(out, expected, `round ${round}`);
    assert.deepEqual(addCounts(main.counts, other.counts), whole.counts);
  }
});

Deno.test("RecordSplitter.cut gives the text of push's records, whatever the chunks", () => {
  const random = seededRandom(3);
  const text = 'a,"b\nc",d\r\ne,f\n"g""\n",h\n\nlast';
  for (let round = 0; round < 50; round++) {
    const pushed = new RecordSplitter();
    const cut = new RecordSplitter();
    for (let i = 0; i < text.length;) {
      const size = 1 + randomInt(random, 6);
      const chunk = text.slice(i, i + size);
      assert.equal(cut.cut(chunk).join(""), pushed.push(chunk).join(""));
      i += size;
    }
    assert.equal(cut.end(), pushed.end());
  }
});

Deno.test("NDJSON and logs: a stray quote (Apache's \\\") does not join a line to the next", async () => {
  const log = '1.1.1.1 - - [10/Oct/2026:13:55:36 +0000] "GET /a\\"b HTTP/1.1" 200 2 "-" "x"\n' +
    '81.2.69.142 - - [10/Oct/2026:13:55:37 +0000] "GET / HTTP/1.1" 200 2 "-" "x"\n';
  const logs = new Enricher(await fixtureLookup(), {
    ...BASE,
    input: "log",
    selection: parseFieldSelection("countryCode"),
  });
  assert.equal(enrich(logs, log, 7).trimEnd().split("\n").length, 2);
  assert.equal(logs.counts.records, 2);
  const ndjson = '{"ip":"81.2.69.142","x":"a\n{"ip":"81.2.69.142"}\n';
  const lines = new Enricher(await fixtureLookup(), { ...BASE, input: "ndjson" });
  const out = enrich(lines, ndjson).trimEnd().split("\n");
  assert.equal(out.length, 2);
  assert.match(JSON.parse(out[0]!).ipintel.error, /^Malformed JSON/);
  assert.equal(JSON.parse(out[1]!).ipintel.country, "United Kingdom");
});

Deno.test("NDJSON: each line's own text kept, the answer added under a key; bad lines pass with an error", async () => {
  const input = '{"source":{"ip":"81.2.69.142"},"n":1.0,"big":12345678901234567890}\n' +
    "{not json\n" +
    '{"source":{"ip":"1.2.3"}}\n' +
    "[1,2]\n" +
    "{}\n";
  const enricher = new Enricher(await fixtureLookup(), {
    ...BASE,
    input: "ndjson",
    field: "source.ip",
    into: "geo",
    selection: parseFieldSelection("countryCode"),
  });
  const lines = enrich(enricher, input).trimEnd().split("\n");
  assert.equal(lines.length, 5);
  assert.equal(
    lines[0],
    '{"source":{"ip":"81.2.69.142"},"n":1.0,"big":12345678901234567890,"geo":{"ip":"81.2.69.142","countryCode":"GB"}}',
  );
  assert.deepEqual(JSON.parse(lines[1]!).line, "{not json");
  assert.match(JSON.parse(lines[1]!).geo.error, /^Malformed JSON/);
  assert.match(JSON.parse(lines[2]!).geo.error, /Invalid IP address "1\.2\.3"/);
  assert.equal(JSON.parse(lines[3]!).geo.error, "Not a JSON object");
  assert.equal(JSON.parse(lines[4]!).geo.error, "No address at source.ip");
  assert.deepEqual(enricher.counts, {
    records: 5,
    enriched: 1,
    partial: {},
    failed: { "malformed JSON": 1, "invalid address": 1, "not an object": 1, "no address": 1 },
  });
});

Deno.test("access logs: every line as an NDJSON record with the answer, or a CSV row with the line", async () => {
  const log =
    '81.2.69.142 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8"\n' +
    'garbage - - [10/Oct/2026:13:55:37 +0000] "GET /x HTTP/1.1" 404 1 "-" "curl/8"\n' +
    '2001:db8::1 - - [10/Oct/2026:13:55:38 +0000] "GET /y HTTP/1.1" 200 1 "-" "curl/8"\n';
  const lookup = await fixtureLookup();
  const ndjson = enrich(
    new Enricher(lookup, {
      ...BASE,
      input: "log",
      selection: parseFieldSelection("countryCode"),
    }),
    log,
  );
  const records = ndjson.trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(records.map((r) => r.line), log.trimEnd().split("\n"));
  assert.deepEqual(records[0].ipintel, { ip: "81.2.69.142", countryCode: "GB" });
  assert.match(records[1].ipintel.error, /Invalid IP address "garbage"/);
  const csv = enrich(
    new Enricher(lookup, {
      ...BASE,
      input: "log",
      output: "csv",
      selection: parseFieldSelection("countryCode"),
    }),
    log,
  );
  const rows: string[][] = parse(csv);
  assert.deepEqual(rows[0], ["line", "ip_countryCode", "ip_error"]);
  assert.deepEqual(rows.slice(1).map((r) => r[0]), log.trimEnd().split("\n"));
  assert.equal(rows[1]![1], "GB");
});

// Real exits from the Tor bulk exit list fixture (as tests/data/history/history_api_test.ts).
const KEPT = "185.241.208.232";
const DROPPED = "171.25.193.25";
const FIRST = new Date("2026-11-01T06:00:00Z");
const SECOND = new Date("2026-11-02T06:00:00Z");
const NOW = new Date("2026-11-03T12:00:00Z");

Deno.test("as of each record's time: an exit only an older snapshot listed is a Tor exit for a row of then, not of now", async () => {
  const dataDir = await writeBaseDataDir();
  const server = startFeedServer();
  try {
    const tor = [feedSource(server, "tor-exits", "tor", "/tor")];
    server.routes.set("/tor", { body: `${KEPT}\n${DROPPED}\n` });
    await update(dataDir, tor, { now: () => FIRST, historyDays: 365 });
    server.routes.set("/tor", { body: `${KEPT}\n` });
    await update(dataDir, tor, { now: () => SECOND, historyDays: 365 });
  } finally {
    await server.close();
  }
  try {
    const data = await openDataSet(dataDir);
    const lookup = createLookup({ data, now: () => NOW, parseUserAgent: createUserAgentParser() });
    const input = "ts,ip\n" +
      `2026-11-01T18:30:00Z,${DROPPED}\n` + // between the updates: listed then
      `${NOW.getTime() / 1000},${DROPPED}\n` + // now (epoch seconds): no longer listed
      `2026-11-02T18:30:00Z,${KEPT}\n` +
      `2025-01-01T00:00:00Z,${KEPT}\n` + // before the kept history: answered, security left out
      `yesterday,${KEPT}\n`;
    const enricher = new Enricher(lookup, {
      ...BASE,
      time: "ts",
      selection: parseFieldSelection("isTor,countryCode"),
    });
    const rows: string[][] = parse(enrich(enricher, input));
    assert.deepEqual(rows[0], ["ts", "ip", "ip_countryCode", "ip_isTor", "ip_error"]);
    assert.equal(rows[1]![3], "true", "listed at the time of the row");
    assert.equal(rows[2]![3], "false", "not listed now");
    assert.equal(rows[3]![3], "true");
    assert.equal(rows[4]![3], "", "a time before the history answers no security");
    assert.match(rows[4]![4]!, /history starts at/);
    assert.match(rows[5]![4]!, /Invalid time "yesterday"/);
    assert.equal(rows[5]![3], "", "an unreadable time answers no security");
    assert.deepEqual(enricher.counts.partial, {
      "time outside the list history": 1,
      "unreadable time": 1,
    });
    assert.deepEqual(enricher.counts.failed, {});
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
