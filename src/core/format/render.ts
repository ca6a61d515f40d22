/**
 * Response bodies in the three output formats (decisions.md, "format" and "Errors").
 * Successes are `{ success: true, data }`; errors `{ success: false, message }`, in XML
 * when XML was asked for and in JSON otherwise (CSV has no place for a message).
 */

import type { FailedItem, Json, LookupResult } from "../../base/types.ts";
import { renderCsv } from "./csv.ts";
import { asciiJson, bulkEnvelopeJson, resultEnvelopeJson } from "./result_json.ts";
import { applySelection, type FieldSelection } from "./select.ts";
import { renderXml } from "./xml.ts";

/** The formats of the `format` query parameter. */
export type OutputFormat = "json" | "xml" | "csv";

/** A rendered body and its `Content-Type`. */
export interface Rendered {
  readonly body: string;
  readonly contentType: string;
}

/** `Content-Type` of each format. */
export const CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = {
  json: "application/json; charset=utf-8",
  xml: "application/xml; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

/** `GET /metrics`: the Prometheus text exposition format that src/service/ops/metrics.ts renders. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const FORMATS: ReadonlyMap<string, OutputFormat> = new Map([
  ["json", "json"],
  ["xml", "xml"],
  ["csv", "csv"],
]);

/**
 * Reads the `format` parameter, case-insensitively and ignoring surrounding spaces;
 * missing or unknown gives `json`.
 *
 * @example parseFormat("XML") // "xml"
 */
export function parseFormat(value: string | undefined | null): OutputFormat {
  if (value === undefined || value === null) return "json";
  return FORMATS.get(value.trim().toLowerCase()) ?? "json";
}

/**
 * Renders a success: `data` is one item's object, or `{ responseArray: [...] }` for
 * bulk; the envelope `{ success: true, data }` is added here. CSV has no envelope:
 * a header row and one row per item.
 *
 * @example renderSuccess({ ip: "1.1.1.1" }, "json").body // '{"success":true,"data":{"ip":"1.1.1.1"}}'
 */
export function renderSuccess(data: Json, format: OutputFormat): Rendered {
  switch (format) {
    case "xml":
      return { body: renderXml({ success: true, data }), contentType: CONTENT_TYPES.xml };
    case "csv":
      return { body: renderCsv(data), contentType: CONTENT_TYPES.csv };
    case "json":
      return { body: asciiJson({ success: true, data }), contentType: CONTENT_TYPES.json };
  }
}

/**
 * The body of a lookup's answer: one result, or a bulk list (failed items in
 * place), after `get`, in `format`. The whole result in JSON, the common case,
 * has its own serialiser (result_json.ts); everything else goes through
 * {@link renderSuccess}.
 */
export function renderLookup(
  data: LookupResult | readonly (LookupResult | FailedItem)[],
  selection: FieldSelection | null,
  format: OutputFormat,
): string {
  const list = Array.isArray(data) ? data as readonly (LookupResult | FailedItem)[] : null;
  if (format === "json" && selection === null) {
    return list ? bulkEnvelopeJson(list) : resultEnvelopeJson(data as LookupResult);
  }
  const selected = list
    ? { responseArray: list.map((item) => applySelection(item, selection)) }
    : applySelection(data as LookupResult, selection);
  return renderSuccess(selected, format).body;
}

/**
 * Renders an error body `{ success: false, message }`: XML for `xml`, JSON otherwise.
 *
 * @example renderError("Rate limit exceeded", "csv").contentType // "application/json; charset=utf-8"
 */
export function renderError(message: string, format: OutputFormat): Rendered {
  if (format === "xml") {
    return { body: renderXml({ success: false, message }), contentType: CONTENT_TYPES.xml };
  }
  return { body: asciiJson({ success: false, message }), contentType: CONTENT_TYPES.json };
}
