/**
 * An independent CSV reference: what the spec and docs/decisions.md ("format")
 * say a CSV answer is, applied to the JSON answer, with csv-stringify doing the
 * quoting. It imports nothing from src/, so it can disagree with the
 * hand-written writer (src/core/format/csv.ts), which must match it byte for byte.
 *
 * The rules, as stated there:
 * - the rows are the JSON answer's `data`: each entry of `responseArray` for bulk,
 *   else `data` itself (a value that is not an object is one column, `value`);
 * - a column is a leaf's path from its row, keys joined with dots (spec 4.1:
 *   "nested objects are flattened with dot notation"); an array is a leaf, written
 *   as its JSON text; an empty object has no leaf; `crawler` (docs/api.md, "Crawlers")
 *   is an object or null, and null still has its three columns, empty;
 * - the header is every column that occurs, in the order first met when the rows
 *   are read with the failed items (those with an `error` object) moved last;
 * - a row lacking a column has an empty cell; `null` is empty, booleans
 *   `true`/`false`, numbers as JSON writes them;
 * - a text cell starting with `=`, `+`, `-`, `@`, tab or CR gets a leading `'`,
 *   except the forms the service writes itself: a UTC offset (`utc`), an offset
 *   abbreviation (`abbr`, `+HHMM`) and a calling code (`dial_code`);
 * - RFC 4180 with CRLF after every record, UTF-8 (a lone surrogate is U+FFFD).
 */

import { stringify } from "csv-stringify/sync";

/** A JSON value as the JSON answer carries it. */
type Wire = null | boolean | number | string | Wire[] | { [key: string]: Wire };
type WireObject = { [key: string]: Wire };

const STRINGIFY_OPTIONS = {
  delimiter: ",",
  record_delimiter: "\r\n",
  // Quote any field holding CR or LF, not only one holding the whole CRLF. csv-stringify
  // turns this off when `record_delimiter` is given, which would let a lone LF through.
  quote_record_delimiter: true,
  quote: '"',
  escape: '"',
  eof: true,
  bom: false,
} as const;

function isObject(value: Wire): value is WireObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every leaf of `value` as [its key path, its value], in key order. */
function leaves(value: WireObject, path: readonly string[] = []): [string[], Wire][] {
  return Object.entries(value).flatMap(([key, child]): [string[], Wire][] =>
    isObject(child)
      ? leaves(child, [...path, key])
      : key === "crawler" && child === null
      ? ["name", "operator", "verified"].map((f) => [[...path, key, f], null])
      : [[[...path, key], child]]
  );
}

/** Text the service writes in a fixed form, by leaf name: not a formula. */
const OWN_FORMS: Record<string, RegExp> = {
  utc: /^[+-][0-9]{2}:[0-9]{2}(:[0-9]{2})?$/,
  abbr: /^[+-][0-9]{4}([0-9]{2})?$/,
  dial_code: /^\+[0-9]{1,4}$/,
};

/** The cell of a leaf named `name`. */
function cell(name: string, value: Wire): string {
  if (value === null) return "";
  if (typeof value === "string") {
    const formula = ["=", "+", "-", "@", "\t", "\r"].includes(value.charAt(0));
    return formula && !OWN_FORMS[name]?.test(value) ? `'${value}` : value;
  }
  return JSON.stringify(value); // numbers, booleans and arrays as JSON writes them
}

/** The columns of one row, name → cell (a name met twice keeps the later value, as JSON does). */
function rowCells(row: Wire): Map<string, string> {
  if (!isObject(row)) return new Map([["value", cell("", row)]]);
  return new Map(leaves(row).map(([path, value]) => [path.join("."), cell(path.at(-1)!, value)]));
}

/** Serialises the `data` of an answer as CSV; "" when there is no column at all. */
export function referenceCsv(data: unknown): string {
  // The JSON answer: what a client of format=json receives for the same request.
  const answer = JSON.parse(JSON.stringify(data)) as Wire;
  const list = isObject(answer) && Array.isArray(answer.responseArray)
    ? answer.responseArray
    : [answer];
  const rows = list.map((row) => ({
    failed: isObject(row) && isObject(row.error ?? null),
    cells: rowCells(row),
  }));
  const headerOrder = [...rows.filter((r) => !r.failed), ...rows.filter((r) => r.failed)];
  const header: string[] = [];
  for (const { cells } of headerOrder) {
    for (const column of cells.keys()) if (!header.includes(column)) header.push(column);
  }
  if (header.length === 0) return "";
  const records = [header, ...rows.map(({ cells }) => header.map((c) => cells.get(c) ?? ""))];
  return stringify(records, STRINGIFY_OPTIONS).toWellFormed();
}
