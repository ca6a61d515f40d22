/** Which kind of input `ipintel enrich` reads, when `--input` does not say. */

import { type EnrichInput, EnrichInputError } from "./enricher.ts";

/**
 * From the file name's extension, else from the first line: a JSON object is
 * NDJSON; a header naming `column` between tabs is TSV, between commas CSV; a
 * line whose first field is an address is an access log; any other header
 * (names between commas or tabs, none an address) is CSV or TSV, whose reading
 * then says the address column is missing. Anything else is refused, naming
 * `--input` and `--column`: a table read as a log would fail every line, quietly.
 *
 * @throws {EnrichInputError} when the first line is none of these.
 */
export function detectInput(path: string, firstChunk: string, column: string): EnrichInput {
  const extension = /\.(csv|tsv|ndjson|jsonl|json|log)(\.\d+)?$/i.exec(path)?.[1]?.toLowerCase();
  if (extension === "csv" || extension === "tsv" || extension === "log") return extension;
  if (extension === "ndjson" || extension === "jsonl" || extension === "json") return "ndjson";
  const text = firstChunk.startsWith("\uFEFF") ? firstChunk.slice(1) : firstChunk;
  const newline = text.indexOf("\n");
  const line = (newline === -1 ? text : text.slice(0, newline)).replace(/\r$/, "");
  if (line.trimStart().startsWith("{")) return "ndjson";
  const names = (delimiter: string) =>
    line.split(delimiter).map((name) => name.trim().replace(/^"|"$/g, ""));
  if (line.includes("\t") && names("\t").includes(column)) return "tsv";
  if (line.includes(",") && names(",").includes(column)) return "csv";
  // An empty first line says nothing: read as a log, as before anything was told.
  if (line.trim() === "" || looksLikeAddress(line.trimStart().split(/\s/, 1)[0]!)) return "log";
  // A header without the address column: read as the table it is, which names what is missing.
  const header = (delimiter: string) =>
    line.includes(delimiter) &&
    names(delimiter).every((name) => name !== "" && !looksLikeAddress(name));
  if (header("\t")) return "tsv";
  if (header(",")) return "csv";
  const where = path === "-" ? "standard input" : path;
  throw new EnrichInputError(
    `Cannot tell what ${where} holds: its first line is not a JSON object, a CSV/TSV header ` +
      `or a log line starting with an address; say it with --input csv, tsv, ndjson or log ` +
      `(and name the address column with --column, the field with --field)`,
  );
}

/** An IPv4 or IPv6 address's shape (the lookup judges it; this only tells a log line). */
function looksLikeAddress(text: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(text) ||
    (text.includes(":") && /^\[?[0-9a-f:.]+(%[\w.-]+)?\]?$/i.test(text));
}
