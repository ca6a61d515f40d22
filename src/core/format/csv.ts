/**
 * CSV serialisation (decisions.md, "format"), written by hand (csv-stringify was
 * about two fifths of the JS time of a CSV answer). Held byte for byte against
 * tests/core/format/_csv_reference.ts, which builds its columns independently (the
 * spec's dot rule over the JSON) and quotes with csv-stringify.
 *
 * - RFC 4180: comma-separated, CRLF after every record (the last one included),
 *   fields quoted with `"` when they hold a comma, a quote, CR or LF, quotes doubled.
 *   No byte-order mark: the body is plain UTF-8. Lone surrogates (which UTF-8 cannot
 *   encode) become U+FFFD, as any UTF-8 encoder would do.
 * - A header row, then one row per item: the `data` object itself for a single
 *   lookup, each entry of `responseArray` for bulk.
 * - Nested keys are flattened with dots (`geoLocation.country`, `userAgent.browser.name`,
 *   `error.status`); an array value is written as its JSON text.
 * - Columns are the union of the flattened keys of all rows, in first-seen order over
 *   the rows that succeeded (so they follow the result layout), then the columns only
 *   failed bulk items have (`error.status`, `error.message`), last, whichever item
 *   comes first. A row without a column gets an empty cell.
 * - `null` is an empty cell; booleans are `true`/`false`; non-finite numbers are empty. A
 *   layout's object leaf (`risk.crawler`: an object or null) has its fields' columns
 *   either way, empty when null, so rows of a bulk answer share them.
 *
 * Spreadsheet formulas (OWASP "CSV injection"): a text cell that begins with `=`, `+`,
 * `-`, `@`, tab or CR is prefixed with `'`, so a spreadsheet shows it as text instead of
 * running it. This covers user-agent parts, names from data files and echoed input.
 * Values whose form the service itself controls are left alone: numbers (written from
 * JSON numbers, so `-97.822` stays a number), UTC offsets (`utc` "-06:00", `abbr`
 * "-0300") and dial codes (`dial_code` "+1").
 */

import { rememberedTexts } from "../../base/shared_part.ts";
import { isLayoutLeaf, type Json, type LayoutGroup, SELECTABLE_LAYOUT } from "../../base/types.ts";

/** The record delimiter (RFC 4180). */
export const CSV_RECORD_DELIMITER = "\r\n";

/** Column name of a row that is not an object (not produced by the service itself). */
const VALUE_COLUMN = "value";

/** The layout's object leaves (an object or null) by key, with their fields' keys. */
const OBJECT_LEAVES: ReadonlyMap<string, readonly string[]> = objectLeaves(SELECTABLE_LAYOUT);

function objectLeaves(group: LayoutGroup, out = new Map<string, string[]>()) {
  for (const [key, node] of Object.entries(group)) {
    if (!isLayoutLeaf(node)) objectLeaves(node, out);
    else if (node.leaf === "object" && node.fields) out.set(key, Object.keys(node.fields));
  }
  return out;
}

/** A field that must be quoted: it holds the delimiter (comma, or tab in TSV), a quote, CR or LF. */
const NEEDS_QUOTES = /[",\r\n]/;
const NEEDS_QUOTES_TSV = /["\t\r\n]/;

/**
 * One field as written: quoted, with its quotes doubled, when it needs it (RFC 4180),
 * and lone surrogates as U+FFFD. Fields are separated by ASCII characters, so a
 * surrogate can only pair within its field: making each field well-formed makes
 * the body well-formed, and the field is where a remembered part's text is made.
 * The one field writer of the project's CSV and TSV (`ipintel enrich` writes TSV
 * with `delimiter` a tab). It does not neutralise formulas: `cellText` does, first.
 */
export function csvField(text: string, delimiter: "," | "\t" = ","): string {
  const safe = text.isWellFormed() ? text : text.toWellFormed();
  return (delimiter === "," ? NEEDS_QUOTES : NEEDS_QUOTES_TSV).test(safe)
    ? `"${safe.replaceAll('"', '""')}"`
    : safe;
}

/** A comma-separated field (`csvField`), for `map`. */
const field = (text: string): string => csvField(text);

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

/** The cell text of a leaf value in column `key` (its leaf name), neutralised when needed. */
export function cellText(key: string, value: Json): string {
  return typeof value === "string" ? textCell(key, value) : cellOf(value);
}

export function isPlainObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The flattened cells of one object under a column prefix: column names, cells
 * (neutralised, not yet quoted), and both as written (fields joined with commas).
 */
interface Flat {
  /** Null at the top level (a top-level key is its own column; `""` is a key too). */
  readonly prefix: string | null;
  readonly columns: readonly string[];
  readonly cells: readonly string[];
  /** `columns` written as header fields (made only for a part that is remembered). */
  readonly header: string | null;
  /** `cells` written as fields (likewise). */
  readonly row: string | null;
  /** Whether some key below is empty or holds a dot (so two paths could give one column name). */
  readonly dotted: boolean;
}

/** Flattens one (possibly nested) object, column names joined with dots. */
function flatten(value: { [key: string]: Json }, prefix: string | null): Flat {
  // A shared part's flattening (src/base/shared_part.ts) is remembered as its `csv` text, with the
  // column prefix it was met under: each is written once per prefix.
  const texts = rememberedTexts(value);
  const shared = texts !== undefined;
  if (shared) {
    const known = texts.csv as Flat | undefined;
    if (known !== undefined && known.prefix === prefix) return known;
  }
  const columns: string[] = [];
  const cells: string[] = [];
  let dotted = false;
  for (const key in value) {
    const child = value[key]!;
    if (key === "" || key.includes(".")) dotted = true;
    const column = prefix === null ? key : `${prefix}.${key}`;
    if (isPlainObject(child)) {
      const inner = flatten(child, column);
      dotted ||= inner.dotted;
      for (const c of inner.columns) columns.push(c);
      for (const c of inner.cells) cells.push(c);
    } else if (child === null && OBJECT_LEAVES.has(key)) {
      for (const field of OBJECT_LEAVES.get(key)!) {
        columns.push(`${column}.${field}`);
        cells.push("");
      }
    } else {
      columns.push(column);
      cells.push(cellText(key, child));
    }
  }
  const flat: Flat = {
    prefix,
    columns,
    cells,
    header: shared ? columns.map(field).join(",") : null,
    row: shared ? cells.map(field).join(",") : null,
    dotted,
  };
  if (shared) texts.csv = flat;
  return flat;
}

/** The rows of a `data` object: `responseArray`'s entries for bulk, else `data` itself. */
function rowsOf(data: Json): readonly Json[] {
  if (isPlainObject(data)) {
    const list = data.responseArray;
    if (Array.isArray(list)) return list;
  }
  return [data];
}

/** A single object row whose columns cannot repeat: its parts' written text, joined. */
function singleRow(row: { [key: string]: Json }): string | null {
  let header = "";
  let cells = "";
  let first = true;
  for (const key in row) {
    if (key === "" || key.includes(".")) return null;
    const child = row[key]!;
    let columnText: string;
    let rowText: string;
    if (isPlainObject(child)) {
      const flat = flatten(child, key);
      if (flat.dotted) return null;
      if (flat.columns.length === 0) continue;
      columnText = flat.header ?? flat.columns.map(field).join(",");
      rowText = flat.row ?? flat.cells.map(field).join(",");
    } else if (child === null && OBJECT_LEAVES.has(key)) {
      const fields = OBJECT_LEAVES.get(key)!;
      columnText = fields.map((f) => field(`${key}.${f}`)).join(",");
      rowText = ",".repeat(fields.length - 1);
    } else {
      columnText = field(key);
      rowText = field(cellText(key, child));
    }
    if (first) {
      header = columnText;
      cells = rowText;
      first = false;
    } else {
      header += `,${columnText}`;
      cells += `,${rowText}`;
    }
  }
  if (first) return "";
  return `${header}${CSV_RECORD_DELIMITER}${cells}${CSV_RECORD_DELIMITER}`;
}

/**
 * Serialises a `data` object as CSV: header row then one row per item. Returns the
 * empty string when there are no columns at all (an empty bulk list).
 *
 * @example renderCsv({ ip: "1.1.1.1", security: { isTor: false } })
 * // "ip,security.isTor\r\n1.1.1.1,false\r\n"
 */
export function renderCsv(data: Json): string {
  const list = rowsOf(data);
  // One lookup (the common case): no union of columns to take.
  const only = list.length === 1 ? list[0]! : null;
  const single = isPlainObject(only) && !isPlainObject(only.error ?? null) ? singleRow(only) : null;
  return single ?? renderRows(list);
}

/** Any rows: columns are the union, those of the rows that succeeded first. */
function renderRows(list: readonly Json[]): string {
  const rows: Map<string, string>[] = [];
  const failed: boolean[] = [];
  for (const row of list) {
    const cells = new Map<string, string>();
    if (isPlainObject(row)) {
      const flat = flatten(row, null);
      flat.columns.forEach((column, i) => cells.set(column, flat.cells[i]!));
    } else {
      cells.set(VALUE_COLUMN, cellText("", row));
    }
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
  let body = csvHeader(header);
  for (const cells of rows) body += csvRecord(header, cells);
  return body;
}

/** The header record of `columns`. */
export function csvHeader(columns: readonly string[]): string {
  return `${columns.map(field).join(",")}${CSV_RECORD_DELIMITER}`;
}

/** One record: the cells of `columns` in order (empty where the row has none). */
function csvRecord(columns: readonly string[], cells: ReadonlyMap<string, string>): string {
  return `${
    columns.map((column) => field(cells.get(column) ?? "")).join(",")
  }${CSV_RECORD_DELIMITER}`;
}

/** The flattened column names of one object row, in its key order. */
export function csvColumns(row: { [key: string]: Json }): string[] {
  return [...flatten(row, null).columns];
}

/**
 * One object row as a record under fixed `columns` (a streamed bulk answer,
 * whose header is written before its rows are known): the same record a whole
 * bulk table with these columns holds.
 */
export function csvRow(row: { [key: string]: Json }, columns: readonly string[]): string {
  const flat = flatten(row, null);
  const cells = new Map<string, string>();
  flat.columns.forEach((column, i) => cells.set(column, flat.cells[i]!));
  return csvRecord(columns, cells);
}
