import assert from "node:assert/strict";
import { type AsnRange, parseAsnCsv } from "../../../src/data/update/asn_csv.ts";

/** Parses `text` and returns the ranges and the count parseAsnCsv reported. */
function parse(text: string): { ranges: AsnRange[]; count: number } {
  const ranges: AsnRange[] = [];
  const count = parseAsnCsv(text, (range) => ranges.push(range));
  return { ranges, count };
}

const range = (first: string, last: string, asn: number, organization: string): AsnRange => ({
  first,
  last,
  asn,
  organization,
});

Deno.test("parseAsnCsv() reads IPv4 and IPv6 rows in order and returns their count", () => {
  const { ranges, count } = parse(
    "1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd\n" +
      "2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project\n",
  );
  assert.equal(count, 2);
  assert.deepEqual(ranges, [
    range("1.0.4.0", "1.0.7.255", 38803, "Gtelecom Pty Ltd"),
    range("2001:200::", "2001:200:1b9:ffff:ffff:ffff:ffff:ffff", 2500, "WIDE Project"),
  ]);
});

const organisations: { field: string; expected: string }[] = [
  { field: '"Cloudflare, Inc."', expected: "Cloudflare, Inc." },
  { field: '"LLC ""SPUTNIK"""', expected: 'LLC "SPUTNIK"' },
  {
    field: '"""Quoted"", at the start, with commas"',
    expected: '"Quoted", at the start, with commas',
  },
  { field: '""', expected: "" },
  { field: "Plain Org", expected: "Plain Org" },
  { field: "Unquoted, with a comma", expected: "Unquoted, with a comma" }, // the last field takes the rest
  { field: 'Inner "quotes" kept as is', expected: 'Inner "quotes" kept as is' },
  { field: "Ünïcödé 株式会社", expected: "Ünïcödé 株式会社" },
];

Deno.test("parseAsnCsv() unquotes organisations with commas and doubled quotes", () => {
  for (const { field, expected } of organisations) {
    const { ranges } = parse(`1.0.0.0,1.0.0.255,13335,${field}`);
    assert.equal(ranges[0]?.organization, expected, field);
  }
});

Deno.test("parseAsnCsv() accepts CRLF line ends and a missing final newline", () => {
  const expected = [
    range("1.0.0.0", "1.0.0.255", 13335, "Cloudflare, Inc."),
    range("8.8.8.0", "8.8.8.255", 15169, "Google LLC"),
  ];
  const rows = ['1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."', "8.8.8.0,8.8.8.255,15169,Google LLC"];
  for (const text of [rows.join("\r\n") + "\r\n", rows.join("\r\n"), rows.join("\n")]) {
    assert.deepEqual(parse(text), { ranges: expected, count: 2 }, JSON.stringify(text));
  }
});

Deno.test("parseAsnCsv() skips empty lines, including trailing ones, without counting them", () => {
  for (
    const text of ["", "\n", "\r\n", "1.0.0.0,1.0.0.255,1,A\n\n", "\n1.0.0.0,1.0.0.255,1,A\r\n\r\n"]
  ) {
    const { ranges, count } = parse(text);
    assert.equal(count, ranges.length, JSON.stringify(text));
    assert.equal(count, text.includes("A") ? 1 : 0, JSON.stringify(text));
  }
});

const malformed: { text: string; error: RegExp }[] = [
  { text: "1.0.0.0,1.0.0.255,13335", error: /ASN CSV line 1: expected 4 fields$/ },
  { text: "1.0.0.0", error: /ASN CSV line 1: expected 4 fields$/ },
  { text: ",1.0.0.255,13335,Org", error: /ASN CSV line 1: expected 4 fields$/ },
  {
    text: "ok,ok,1,A\nok,ok,2,B\n1.0.0.0 1.0.0.255 3 C\n",
    error: /ASN CSV line 3: expected 4 fields$/,
  },
  // Blank lines still count towards the line number.
  { text: "ok,ok,1,A\n\n\r\nbad\n", error: /ASN CSV line 4: expected 4 fields$/ },
  { text: 'ok,ok,1,A\r\nok,ok,2,"Unterminated\r\n', error: /ASN CSV line 2: unterminated/ },
  { text: 'ok,ok,1,"', error: /ASN CSV line 1: unterminated quoted field$/ },
  // A quoted organisation split over two lines is not supported: the first half is unterminated.
  { text: 'ok,ok,1,"Two\nLines"\n', error: /ASN CSV line 1: unterminated quoted field$/ },
];

Deno.test("parseAsnCsv() rejects malformed rows, naming the line number", () => {
  for (const { text, error } of malformed) {
    assert.throws(() => parse(text), error, JSON.stringify(text));
  }
});

Deno.test("parseAsnCsv() reports rows before the malformed one, then stops", () => {
  const seen: number[] = [];
  assert.throws(
    () => parseAsnCsv("a,b,1,A\na,b,2,B\nbroken\na,b,4,D\n", (r) => seen.push(r.asn)),
    /line 3/,
  );
  assert.deepEqual(seen, [1, 2]);
});

const invalidAsns = ["AS15169", "abc", "-1", "1.5", "4294967296", "99999999999999999999", "NaN"];

Deno.test("parseAsnCsv() rejects invalid AS numbers, quoting the field and naming the line", () => {
  for (const asn of invalidAsns) {
    assert.throws(
      () => parse(`1.0.0.0,1.0.0.255,1,First\n1.0.1.0,1.0.1.255,${asn},Org\n`),
      new RegExp(`ASN CSV line 2: invalid AS number "${asn.replace(".", "\\.")}"$`),
      asn,
    );
  }
});

Deno.test("parseAsnCsv() accepts AS numbers from 0 to 4294967295 (32-bit)", () => {
  for (const asn of [0, 1, 15169, 4294967294, 4294967295]) {
    assert.equal(parse(`1.0.0.0,1.0.0.255,${asn},Org`).ranges[0]?.asn, asn);
  }
});

Deno.test({
  name: "parseAsnCsv() rejects AS numbers that are not plain digits",
  fn: () => {
    for (const asn of ["", " 15169", "15169 ", "0x10", "1e3", "+1"]) {
      assert.throws(() => parse(`1.0.0.0,1.0.0.255,${asn},Org`), /line 1: invalid AS number/, asn);
    }
  },
});
