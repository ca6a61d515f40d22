import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { renderCsv } from "../../../src/core/format/csv.ts";
import { FIELDS } from "../../../src/core/format/fields.ts";
import { renderSuccess } from "../../../src/core/format/render.ts";
import { applySelection, parseFieldSelection } from "../../../src/core/format/select.ts";
import type { Json } from "../../../src/base/types.ts";
import { asJson, HOSTILE, resultWith, sampleFailed, sampleResult } from "./_sample.ts";
import { HAS_PYTHON, NO_PYTHON, pythonCsv } from "./_tools.ts";
import { ignoredName } from "../../_skip.ts";

/** Dotted leaf paths of the layout, in order: the columns of a full result. */
// The columns of a full result (the opt-in risk and network are not part of it).
const LEAF_COLUMNS = FIELDS.filter((f) =>
  !f.isObject && f.segments[0] !== "risk" && f.segments[0] !== "network"
).map((f) => f.path);

/**
 * OWASP's rule, written out independently: text beginning with = + - @ tab or CR gets a
 * leading `'`, except the service's own forms of dial codes, UTC offsets and abbreviations.
 */
function neutralised(leaf: string, text: string): string {
  const first = text[0];
  if (first === undefined || !"=+-@\t\r".includes(first)) return text;
  if (leaf === "dial_code" && /^\+[0-9]+$/.test(text)) return text;
  if (leaf === "utc" && /^[+-][0-9][0-9]:[0-9][0-9]$/.test(text)) return text;
  if (leaf === "abbr" && /^[+-][0-9]{4}$/.test(text)) return text;
  return `'${text}`;
}

/** Whether a bulk item is a failed one (`{ ip, error }`). */
function isFailed(row: Json): boolean {
  return row !== null && typeof row === "object" && !Array.isArray(row) && "error" in row;
}

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
        const leaf = path.slice(path.lastIndexOf(".") + 1);
        const text = typeof v === "string" ? neutralised(leaf, v).toWellFormed() : null;
        cells.set(path, v === null ? "" : text ?? String(v));
      }
    };
    walk(row, "");
    return cells;
  });
}

/**
 * Checks parsed records against the reference: header = first-seen union of the rows that
 * succeeded, then of the failed ones; cells by name.
 */
function assertRecords(records: string[][], data: Json): void {
  const rows = expectedRows(data);
  const items = data !== null && typeof data === "object" && !Array.isArray(data) &&
      Array.isArray(data.responseArray)
    ? data.responseArray
    : [data];
  const header: string[] = [];
  for (const failedPass of [false, true]) {
    rows.forEach((row, i) => {
      if (isFailed(items[i]!) !== failedPass) return;
      for (const k of row.keys()) if (!header.includes(k)) header.push(k);
    });
  }
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
    { data: { a: " padded ", b: "=1+2", c: "+1" }, csv: "a,b,c\r\n padded ,'=1+2,'+1\r\n" },
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

Deno.test("renderSuccess csv of bulk keeps the layout's columns, errors last, when a failed item comes first", () => {
  const data: Json = { responseArray: [asJson(sampleFailed()), asJson(sampleResult())] };
  const records = parseWithCsvParse(renderSuccess(data, "csv").body);
  assert.deepEqual(records[0], [...LEAF_COLUMNS, "error.status", "error.message"]);
  assertRecords(records, data);
});

Deno.test("renderSuccess csv of bulk with only failed items: ip then the error columns", () => {
  const data: Json = { responseArray: [asJson(sampleFailed()), asJson(sampleFailed("x"))] };
  const records = parseWithCsvParse(renderSuccess(data, "csv").body);
  assert.deepEqual(records[0], ["ip", "error.status", "error.message"]);
});

/** Text a spreadsheet would run as a formula, one per OWASP trigger character. */
const FORMULAS = [
  `=HYPERLINK("http://evil.example","click")`,
  "+1+cmd|' /C calc'!A0",
  "-2+3",
  "@SUM(1,2)",
  "\t=1+1",
  "\r=1+1",
];

for (const formula of FORMULAS) {
  Deno.test(`renderCsv neutralises ${JSON.stringify(formula)} in names, user agent and echoed input`, async () => {
    const result = resultWith(formula); // city, asn_org, browser.name, …
    const data: Json = {
      responseArray: [
        asJson(result),
        asJson({ ip: formula, error: { status: 404, message: "Invalid IP address" } }),
      ],
    };
    const body = renderSuccess(data, "csv").body;
    const records = HAS_PYTHON ? await pythonCsv(body) : parseWithCsvParse(body);
    const header = records[0]!;
    const cell = (row: number, column: string) => records[row]![header.indexOf(column)];
    for (const column of ["geoLocation.city", "connection.asn_org", "userAgent.browser.name"]) {
      assert.equal(cell(1, column), `'${formula}`, column);
    }
    assert.equal(cell(2, "ip"), `'${formula}`);
    assertRecords(records, data);
  });
}

Deno.test("renderCsv leaves the service's own forms alone: numbers, UTC offsets, dial codes", () => {
  const result = sampleResult();
  result.geoLocation.latitude = -33.8688;
  result.geoLocation.dial_code = "+1";
  result.timezone.utc = "-06:00";
  result.timezone.abbr = "-0300";
  result.timezone.offset = -21600;
  const records = parseWithCsvParse(renderSuccess(asJson(result), "csv").body);
  const cell = (column: string) => records[1]![records[0]!.indexOf(column)];
  assert.equal(cell("geoLocation.latitude"), "-33.8688");
  assert.equal(cell("geoLocation.dial_code"), "+1");
  assert.equal(cell("timezone.utc"), "-06:00");
  assert.equal(cell("timezone.abbr"), "-0300");
  assert.equal(cell("timezone.offset"), "-21600");
  // The same text where the service does not control the form is neutralised.
  result.geoLocation.city = "+1";
  result.userAgent.os.version = "-06:00";
  const again = parseWithCsvParse(renderSuccess(asJson(result), "csv").body);
  assert.equal(again[1]![again[0]!.indexOf("geoLocation.city")], "'+1");
  assert.equal(again[1]![again[0]!.indexOf("userAgent.os.version")], "'-06:00");
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
    name: ignoredName(
      `renderSuccess csv of ${doc.name} reads back with Python's csv module`,
      NO_PYTHON,
    ),
    ignore: !HAS_PYTHON,
    fn: async () => {
      assertRecords(await pythonCsv(renderSuccess(doc.data, "csv").body), doc.data);
    },
  });
}
