import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { renderCsv } from "../../src/format/csv.ts";
import { FIELDS } from "../../src/format/fields.ts";
import { renderSuccess } from "../../src/format/render.ts";
import { applySelection, parseFieldSelection } from "../../src/format/select.ts";
import type { Json } from "../../src/types.ts";
import { asJson, HOSTILE, resultWith, sampleFailed, sampleResult } from "./_sample.ts";
import { HAS_PYTHON, pythonCsv } from "./_tools.ts";

/** Dotted leaf paths of the layout, in order: the columns of a full result. */
const LEAF_COLUMNS = FIELDS.filter((f) => !f.isObject).map((f) => f.path);

/** Independent reference: one `column → cell` map per row, text as UTF-8 would carry it. */
function expectedRows(data: Json): Map<string, string>[] {
  const rows = data !== null && typeof data === "object" && !Array.isArray(data) &&
      Array.isArray(data.responseArray)
    ? data.responseArray
    : [data];
  return rows.map((row) => {
    const cells = new Map<string, string>();
    const walk = (v: Json, path: string): void => {
      if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        for (const [k, c] of Object.entries(v)) walk(c, path === "" ? k : `${path}.${k}`);
      } else {
        cells.set(path, v === null ? "" : typeof v === "string" ? v.toWellFormed() : String(v));
      }
    };
    walk(row, "");
    return cells;
  });
}

/** Checks parsed records against the reference: header = first-seen union, cells by name. */
function assertRecords(records: string[][], data: Json): void {
  const rows = expectedRows(data);
  const header: string[] = [];
  for (const row of rows) for (const k of row.keys()) if (!header.includes(k)) header.push(k);
  assert.deepEqual(records[0], header);
  assert.equal(records.length, rows.length + 1);
  rows.forEach((row, i) => {
    assert.deepEqual(records[i + 1], header.map((column) => row.get(column) ?? ""), `row ${i}`);
  });
}

function parseWithCsvParse(body: string): string[][] {
  return parse(body, { relax_column_count: false, skip_empty_lines: false });
}

Deno.test("renderSuccess csv of a single result: header of dotted leaf paths, one row", () => {
  const { body, contentType } = renderSuccess(asJson(sampleResult()), "csv");
  assert.equal(contentType, "text/csv; charset=utf-8");
  const records = parseWithCsvParse(body);
  assert.deepEqual(records[0], LEAF_COLUMNS);
  assert.ok(LEAF_COLUMNS.includes("timezone.time_zone"));
  assert.ok(LEAF_COLUMNS.includes("flag.flag_Icon"));
  assert.ok(LEAF_COLUMNS.includes("userAgent.browser.name"));
  assertRecords(records, asJson(sampleResult()));
});

Deno.test("renderSuccess csv writes null empty, booleans true/false, numbers as text", () => {
  const records = parseWithCsvParse(renderSuccess(asJson(sampleResult()), "csv").body);
  const row = new Map(records[0]!.map((column, i) => [column, records[1]![i]]));
  const expected: [string, string][] = [
    ["ip", "8.8.8.8"],
    ["geoLocation.city", ""],
    ["geoLocation.is_in_eu", "false"],
    ["timezone.is_dst", "true"],
    ["geoLocation.latitude", "37.751"],
    ["geoLocation.longitude", "-97.822"],
    ["timezone.offset", "-18000"],
    ["geoLocation.dial_code", "+1"],
    ["timezone.utc", "-05:00"],
    ["flag.flag_Icon", "🇺🇸"],
    ["userAgent.device.vendor", ""],
    ["security.isThreat", "low"],
  ];
  for (const [column, cell] of expected) assert.equal(row.get(column), cell, column);
});

Deno.test("renderCsv uses CRLF after every record and quotes only when needed", () => {
  const cases: { data: Json; csv: string }[] = [
    {
      data: { ip: "1.1.1.1", security: { isTor: false } },
      csv: "ip,security.isTor\r\n1.1.1.1,false\r\n",
    },
    { data: { a: "x,y", b: 'say "hi"' }, csv: 'a,b\r\n"x,y","say ""hi"""\r\n' },
    { data: { a: "l1\nl2", b: "r\r" }, csv: 'a,b\r\n"l1\nl2","r\r"\r\n' },
    { data: { a: " padded ", b: "=1+2", c: "+1" }, csv: "a,b,c\r\n padded ,=1+2,+1\r\n" },
    { data: { a: null, b: "", c: NaN, d: [1, "x"] }, csv: 'a,b,c,d\r\n,,,"[1,""x""]"\r\n' },
    { data: { "odd,name": 1 }, csv: '"odd,name"\r\n1\r\n' },
    { data: { responseArray: [] }, csv: "" },
  ];
  for (const c of cases) assert.equal(renderCsv(c.data), c.csv, JSON.stringify(c.data));
});

Deno.test("renderSuccess csv of a filtered result has only the selected columns", () => {
  const data = applySelection(sampleResult(), parseFieldSelection("currency.code,city,browser"));
  const records = parseWithCsvParse(renderSuccess(data, "csv").body);
  assert.deepEqual(records, [
    ["ip", "city", "currency.code", "browser.name", "browser.version"],
    ["8.8.8.8", "", "USD", "Chrome", "125.0.0.0"],
  ]);
});

Deno.test("renderSuccess csv of bulk: one row per item, failed items fill error columns", () => {
  const data: Json = {
    responseArray: [asJson(sampleResult()), asJson(sampleFailed()), asJson(sampleResult("::1"))],
  };
  const records = parseWithCsvParse(renderSuccess(data, "csv").body);
  assert.deepEqual(records[0], [...LEAF_COLUMNS, "error.status", "error.message"]);
  assert.equal(records.length, 4);
  const failedRow = records[2]!;
  assert.equal(failedRow[0], "999.1.1.1");
  assert.deepEqual(failedRow.slice(1, -2), LEAF_COLUMNS.slice(1).map(() => ""));
  assert.deepEqual(failedRow.slice(-2), ["404", sampleFailed().error.message]);
  assert.deepEqual(records[3]!.slice(-2), ["", ""]);
  assertRecords(records, data);
});

Deno.test("renderSuccess csv of bulk orders columns by first sight (failed item first)", () => {
  const data: Json = { responseArray: [asJson(sampleFailed()), asJson(sampleResult())] };
  const records = parseWithCsvParse(renderSuccess(data, "csv").body);
  assert.deepEqual(records[0], ["ip", "error.status", "error.message", ...LEAF_COLUMNS.slice(1)]);
  assertRecords(records, data);
});

/** Every UTF-16 code unit once, in chunks that mix controls, quotes and surrogates. */
const EVERY_CODE_UNIT: string[] = [];
for (let start = 0; start < 0x10000; start += 0x1000) {
  EVERY_CODE_UNIT.push(
    String.fromCharCode(...Array.from({ length: 0x1000 }, (_, i) => start + i)),
  );
}

const DOCUMENTS: { name: string; data: Json }[] = [
  ...HOSTILE.map((h) => ({
    name: `hostile text: ${h.name}`,
    data: {
      responseArray: [
        asJson(resultWith(h.text)),
        asJson({ ip: h.text, error: { status: 404, message: `Invalid IP address ${h.text}` } }),
      ],
    },
  })),
  {
    name: "every UTF-16 code unit",
    data: { responseArray: EVERY_CODE_UNIT.map((t) => asJson(resultWith(t))) },
  },
];

for (const doc of DOCUMENTS) {
  Deno.test(`renderSuccess csv of ${doc.name} reads back with csv-parse`, () => {
    const { body } = renderSuccess(doc.data, "csv");
    assert.ok(body.isWellFormed());
    assertRecords(parseWithCsvParse(body), doc.data);
  });

  Deno.test({
    name: `renderSuccess csv of ${doc.name} reads back with Python's csv module`,
    ignore: !HAS_PYTHON,
    fn: async () => {
      assertRecords(await pythonCsv(renderSuccess(doc.data, "csv").body), doc.data);
    },
  });
}
