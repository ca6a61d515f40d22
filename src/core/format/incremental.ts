/**
 * Streamed bulk answers: the document opening, each batch of items, and the
 * closing (with the final record when the stream stopped early), in NDJSON,
 * JSON, CSV and XML. Each item is written by the same serialiser as the whole
 * (non-streamed) answer, so a streamed answer holds the same bytes per item:
 *
 * - NDJSON (`application/x-ndjson`): one item's JSON a line; a stop is a last
 *   line `{"incomplete":{...}}`.
 * - JSON: the whole answer's envelope, `responseArray` written as it goes; a
 *   stop adds `"incomplete":{...}` to `data` after `responseArray`.
 * - CSV: the header, written first, has the columns of the selection and then
 *   always `error.status` and `error.message` (a whole table has them only when
 *   an item failed: a stream cannot know in advance); a stop is a last row with
 *   an empty `ip` and the stop's status and message.
 * - XML: the whole document's elements; a stop adds `<incomplete>` to `data`.
 *
 * The final record `incomplete` is `{status, message, answered, retryAfter}`.
 */

import type { BulkItem, BulkStop } from "../../base/types.ts";
import {
  isLayoutLeaf,
  type Json,
  type LayoutGroup,
  RESULT_LAYOUT,
  SELECTABLE_LAYOUT,
} from "../../base/types.ts";
import { csvColumns, csvHeader, csvRow } from "./csv.ts";
import { CONTENT_TYPES, type OutputFormat, parseFormat } from "./render.ts";
import { asciiJson, bulkItemJson } from "./result_json.ts";
import { applySelection, type FieldSelection } from "./select.ts";
import { XML_DECLARATION, xmlElement } from "./xml.ts";

/** The formats a bulk answer streams in: the output formats and NDJSON. */
export type StreamFormat = OutputFormat | "ndjson";

export const NDJSON_CONTENT_TYPE = "application/x-ndjson";

/**
 * The streamed format a request asks for: `format=ndjson`, or no `format` and
 * an `Accept` that names `application/x-ndjson`; otherwise as `format` says.
 *
 * @example streamFormat(undefined, "application/x-ndjson") // "ndjson"
 */
export function streamFormat(
  format: string | undefined | null,
  accept: string | null,
): StreamFormat {
  if (format !== undefined && format !== null) {
    return format.trim().toLowerCase() === "ndjson" ? "ndjson" : parseFormat(format);
  }
  return accept !== null && /(^|[\s,])application\/x-ndjson\s*(;|,|$)/i.test(accept)
    ? "ndjson"
    : "json";
}

/** Writes one streamed answer; keeps only whether an item was written yet. */
export interface StreamWriter {
  readonly contentType: string;
  /** The opening of the answer. */
  head(): string;
  /** The text of a batch of items, in order. */
  items(items: readonly BulkItem[]): string;
  /** The closing of the answer, with the final record when it stopped early. */
  tail(stop: BulkStop | null): string;
}

/** A writer for one answer in `format`, each item filtered by `selection`. */
export function streamWriter(format: StreamFormat, selection: FieldSelection | null): StreamWriter {
  const json = selection === null
    ? bulkItemJson
    : (item: BulkItem) => asciiJson(applySelection(item, selection));
  switch (format) {
    case "ndjson":
      return {
        contentType: NDJSON_CONTENT_TYPE,
        head: () => "",
        items: (items) => {
          // Concatenation, then one copy by encodeText, is the cheapest way to the bytes.
          let text = "";
          for (const item of items) text += `${json(item)}\n`;
          return text;
        },
        tail: (stop) => stop ? `${asciiJson({ incomplete: stopRecord(stop) })}\n` : "",
      };
    case "json": {
      let first = true;
      return {
        contentType: CONTENT_TYPES.json,
        head: () => '{"success":true,"data":{"responseArray":[',
        items: (items) => {
          let text = "";
          for (const item of items) {
            text += first ? json(item) : `,${json(item)}`;
            first = false;
          }
          return text;
        },
        tail: (stop) => stop ? `],"incomplete":${asciiJson(stopRecord(stop))}}}` : "]}}",
      };
    }
    case "csv": {
      // A selection may name the opt-in groups (`risk`, `network`): its template has them.
      const template = selection === null ? TEMPLATE : SELECTABLE_TEMPLATE;
      const columns = [...csvColumns(applySelection(template, selection)), ...ERROR_COLUMNS];
      return {
        contentType: CONTENT_TYPES.csv,
        head: () => csvHeader(columns),
        items: (items) =>
          items.map((item) => csvRow(applySelection(item, selection), columns)).join(""),
        tail: (stop) =>
          stop
            ? csvRow({ ip: "", error: { status: stop.status, message: stop.message } }, columns)
            : "",
      };
    }
    case "xml":
      return {
        contentType: CONTENT_TYPES.xml,
        head: () => `${XML_DECLARATION}\n<response><success>true</success><data><responseArray>`,
        items: (items) =>
          items.map((item) => xmlElement("item", applySelection(item, selection))).join(""),
        tail: (stop) =>
          `</responseArray>${
            stop ? xmlElement("incomplete", stopRecord(stop)) : ""
          }</data></response>`,
      };
  }
}

/** The final record, keys in a fixed order. */
function stopRecord(stop: BulkStop): { [key: string]: Json } {
  return {
    status: stop.status,
    message: stop.message,
    answered: stop.answered,
    retryAfter: stop.retryAfter,
  };
}

const ERROR_COLUMNS = ["error.status", "error.message"] as const;

/** A result with every key of the layout (values null): the columns every result has. */
const TEMPLATE = templateOf(RESULT_LAYOUT) as unknown as BulkItem;

/** The same with the opt-in groups, for a selection to pick from. */
const SELECTABLE_TEMPLATE = templateOf(SELECTABLE_LAYOUT) as unknown as BulkItem;

function templateOf(group: LayoutGroup): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [key, node] of Object.entries(group)) {
    out[key] = isLayoutLeaf(node) ? null : templateOf(node);
  }
  return out;
}

const encoder = new TextEncoder();

/**
 * A written piece as UTF-8 bytes. JSON and NDJSON answers are ASCII (see
 * result_json.ts), which `encodeInto` copies at memory speed into a buffer of
 * the string's length; `encode` (several times slower on large strings) is
 * left for text with other characters.
 */
export function encodeText(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  const { read, written } = encoder.encodeInto(text, bytes);
  return read === text.length && written === text.length ? bytes : encoder.encode(text);
}
