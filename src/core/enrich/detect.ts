/** Which kind of input `ipintel enrich` reads, when `--input` does not say. */

import type { EnrichInput } from "./enricher.ts";

/**
 * From the file name's extension, else from the first line: a JSON object is
 * NDJSON; a header naming `column` between tabs is TSV, between commas CSV;
 * anything else is an access log (the address first on each line).
 */
export function detectInput(path: string, firstChunk: string, column: string): EnrichInput {
  const extension = /\.(csv|tsv|ndjson|jsonl|json|log)(\.\d+)?$/i.exec(path)?.[1]?.toLowerCase();
  if (extension === "csv" || extension === "tsv" || extension === "log") return extension;
  if (extension === "ndjson" || extension === "jsonl" || extension === "json") return "ndjson";
  const newline = firstChunk.indexOf("\n");
  const line = (newline === -1 ? firstChunk : firstChunk.slice(0, newline)).replace(/\r$/, "");
  if (line.trimStart().startsWith("{")) return "ndjson";
  const named = (delimiter: string) =>
    line.split(delimiter).some((name) => name.trim().replace(/^"|"$/g, "") === column);
  if (line.includes("\t") && named("\t")) return "tsv";
  if (line.includes(",") && named(",")) return "csv";
  return "log";
}
