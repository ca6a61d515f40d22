/**
 * CSV serialisation (decisions.md, "format"), written with csv-stringify.
 *
 * - RFC 4180: comma-separated, CRLF after every record (the last one included),
 *   fields quoted with `"` when they hold a comma, a quote, CR or LF, quotes doubled.
 *   No byte-order mark: the body is plain UTF-8. Lone surrogates (which UTF-8 cannot
 *   encode) become U+FFFD, as any UTF-8 encoder would do.
 * - A header row, then one row per item: the `data` object itself for a single
 *   lookup, each entry of `responseArray` for bulk.
 * - Nested keys are flattened with dots (`geoLocation.country`, `userAgent.browser.name`,
 *   `error.status`); an array value is written as its JSON text.
 * - Columns are the union of the flattened keys of all rows, in first-seen order; a
 *   row without a column gets an empty cell (so failed bulk items fill `ip`,
 *   `error.status`, `error.message` and leave the rest empty).
 * - `null` is an empty cell; booleans are `true`/`false`; non-finite numbers are empty.
 *
 * Formula injection: values are written verbatim, with no `'` prefix before `=`, `+`,
 * `-` or `@`. This is a data API, not a spreadsheet export: legitimate values start
 * with those characters (`dial_code` "+1", `utc` "-05:00", negative coordinates), and
 * a prefix would corrupt them for every CSV reader. Well-formed RFC 4180 is the contract;
 * a consumer that opens the file in a spreadsheet must treat cells as text.
 */

import { stringify } from "csv-stringify/sync";
import type { Json } from "../types.ts";

/** The record delimiter (RFC 4180). */
export const CSV_RECORD_DELIMITER = "\r\n";

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
    else cells.set(column, cellOf(child));
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
export function renderCsv(data: Json): string {
  const columns = new Map<string, number>();
  const rows: Map<string, string>[] = [];
  for (const row of rowsOf(data)) {
    const cells = new Map<string, string>();
    if (isPlainObject(row)) flatten(row, "", cells);
    else cells.set(VALUE_COLUMN, cellOf(row));
    for (const column of cells.keys()) {
      if (!columns.has(column)) columns.set(column, columns.size);
    }
    rows.push(cells);
  }
  if (columns.size === 0) return "";
  const header = [...columns.keys()];
  const records: string[][] = [header];
  for (const cells of rows) records.push(header.map((column) => cells.get(column) ?? ""));
  const body = stringify(records, STRINGIFY_OPTIONS);
  return body.isWellFormed() ? body : body.toWellFormed();
}
