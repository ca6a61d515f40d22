/**
 * The CSV serialiser as it was, built with csv-stringify: the reference the
 * hand-written one (src/format/csv.ts) must match byte for byte.
 */

import { stringify } from "csv-stringify/sync";
import type { Json } from "../../src/types.ts";

/** The record delimiter (RFC 4180). */
const CSV_RECORD_DELIMITER = "\r\n";

/** Column name of a row that is not an object (not produced by the service itself). */
const VALUE_COLUMN = "value";

const STRINGIFY_OPTIONS = {
  delimiter: ",",
  record_delimiter: CSV_RECORD_DELIMITER,
  // Quote any field holding CR or LF, not only one holding the whole CRLF. csv-stringify
  // turns this off when `record_delimiter` is given, which would let a lone LF through.
  quote_record_delimiter: true,
  quote: '"',
  escape: '"',
  eof: true,
  bom: false,
} as const;

function cellOf(value: Json): string {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
      return Number.isFinite(value) ? String(value) : "";
    case "boolean":
      return value ? "true" : "false";
    default:
      // null, or an array (written as its JSON text); objects are flattened before.
      return value === null ? "" : JSON.stringify(value);
  }
}

/** Characters that make a spreadsheet read a cell as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Leaf names whose values the service writes in a fixed form, checked by that form. */
const CONTROLLED_FORMS: ReadonlyMap<string, RegExp> = new Map([
  ["dial_code", /^\+\d{1,4}$/],
  ["utc", /^[+-]\d{2}:\d{2}(?::\d{2})?$/],
  ["abbr", /^[+-]\d{4}(?:\d{2})?$/],
]);

/** The cell of a text value in column `key` (the leaf name), neutralised when needed. */
function textCell(key: string, text: string): string {
  if (!FORMULA_START.test(text)) return text;
  if (CONTROLLED_FORMS.get(key)?.test(text)) return text;
  return `'${text}`;
}

function isPlainObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Adds the cells of one (possibly nested) object, column names joined with dots. */
function flatten(
  value: { [key: string]: Json },
  prefix: string,
  cells: Map<string, string>,
): void {
  for (const key in value) {
    const child = value[key]!;
    const column = prefix === "" ? key : `${prefix}.${key}`;
    if (isPlainObject(child)) flatten(child, column, cells);
    else cells.set(column, typeof child === "string" ? textCell(key, child) : cellOf(child));
  }
}

/** The rows of a `data` object: `responseArray`'s entries for bulk, else `data` itself. */
function rowsOf(data: Json): readonly Json[] {
  if (isPlainObject(data)) {
    const list = data.responseArray;
    if (Array.isArray(list)) return list;
  }
  return [data];
}

/**
 * Serialises a `data` object as CSV: header row then one row per item. Returns the
 * empty string when there are no columns at all (an empty bulk list).
 *
 * @example renderCsv({ ip: "1.1.1.1", security: { isTor: false } })
 * // "ip,security.isTor\r\n1.1.1.1,false\r\n"
 */
export function referenceCsv(data: Json): string {
  const rows: Map<string, string>[] = [];
  const failed: boolean[] = [];
  for (const row of rowsOf(data)) {
    const cells = new Map<string, string>();
    if (isPlainObject(row)) flatten(row, "", cells);
    else cells.set(VALUE_COLUMN, typeof row === "string" ? textCell("", row) : cellOf(row));
    rows.push(cells);
    failed.push(isPlainObject(row) && isPlainObject(row.error ?? null));
  }
  // Columns of the rows that succeeded first, then those only failed items have.
  const columns = new Set<string>();
  for (const pass of [false, true]) {
    rows.forEach((cells, i) => {
      if (failed[i] === pass) { for (const column of cells.keys()) columns.add(column); }
    });
  }
  if (columns.size === 0) return "";
  const header = [...columns];
  const records: string[][] = [header];
  for (const cells of rows) records.push(header.map((column) => cells.get(column) ?? ""));
  const body = stringify(records, STRINGIFY_OPTIONS);
  return body.isWellFormed() ? body : body.toWellFormed();
}
