/**
 * The CSV serialiser as it was, built with csv-stringify: the reference the
 * hand-written one (src/format/csv.ts) must match byte for byte.
 */

import { stringify } from "csv-stringify/sync";
import type { Json } from "../../src/types.ts";
// The cell rules (text of a value, formula neutralising) are the service's, shared here:
// this reference checks what csv-stringify did, the quoting and the rows' layout.
import { cellText, isPlainObject } from "../../src/format/csv.ts";

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
    else cells.set(column, cellText(key, child));
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
    else cells.set(VALUE_COLUMN, cellText("", row));
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
