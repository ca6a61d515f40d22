/**
 * `ipintel enrich`'s engine: text in, the same records out, in order, each
 * with the answer for its address added, optionally as the security lists
 * stood when the record was written. No I/O here: the command
 * (src/process/cli/enrich.ts) feeds it chunks and writes what it returns.
 *
 * - CSV and TSV with a header: the address column by name; new columns
 *   appended with a prefix, then `<prefix>error`. A row is written back as it
 *   was read, its line break included; added fields are quoted as needed.
 * - NDJSON: the address at a dotted path; the answer added under a key, the
 *   line's own text kept as it was (the key is spliced in before its last `}`).
 * - Access logs (nginx/Apache common and combined, or any line whose first
 *   field is the address): each line becomes an NDJSON record holding the line
 *   and the answer (or a CSV row with the line as its first column).
 *
 * A record that cannot be answered (no address, an invalid one, a malformed
 * JSON line, a short CSV row) is written with an error instead of the answer
 * and counted by reason; the run goes on.
 */

import { AppError } from "../../base/errors.ts";
import type { FailedItem, Json, LookupResult } from "../../base/types.ts";
import { cellText, csvField } from "../format/csv.ts";
import { applySelection, type FieldSelection } from "../format/select.ts";
import type { Lookup, LookupOptions } from "../lookup/lookup.ts";
import { type Column, columnsOf, valueAt } from "./columns.ts";
import {
  fieldAt,
  MAX_RECORD,
  parseFields,
  type Piece,
  RecordSplitter,
  splitLineEnd,
} from "./csv_records.ts";
import { topLevelValueSpan } from "./json_span.ts";
import { logUserAgent } from "./log_agent.ts";
import { createTimeReader } from "./record_time.ts";

export type EnrichInput = "csv" | "tsv" | "ndjson" | "log";

/** A record's answer: the lookup result (null: none), whether its security parts hold, the error. */
interface Answered {
  result: LookupResult | null;
  /** False for a time before the kept history: the rest is answered, security is not known. */
  securityKnown: boolean;
  reason: string | null;
  message: string | null;
}

const NOT_ANSWERED = (reason: string, message: string): Answered => ({
  result: null,
  securityKnown: false,
  reason,
  message,
});
export type EnrichOutput = "csv" | "tsv" | "ndjson";

export interface EnrichOptions {
  input: EnrichInput;
  /** Fixed by the input for CSV, TSV and NDJSON; a log becomes NDJSON (default) or CSV. */
  output: EnrichOutput;
  /** CSV/TSV: the address column's name. */
  column?: string;
  /** NDJSON: the address field's dotted path (`source.ip`). */
  field?: string;
  /** CSV/TSV: the time column's name; NDJSON: the time field's dotted path. */
  time?: string;
  /** Logs: answer as of each line's own `[...]` time. */
  logTime?: boolean;
  /**
   * CSV/TSV: the user-agent column's name; NDJSON: the user-agent field's dotted path.
   * (A log's user agent is its combined format's last quoted field.)
   */
  userAgent?: string;
  /** CSV/TSV: prefix of the added columns. */
  prefix: string;
  /** NDJSON (and logs as NDJSON): the key the answer is added under. */
  into: string;
  selection: FieldSelection | null;
  lang: string | null;
  /** One time for every record (`--at`); null: now, unless records carry their own. */
  at: Date | null;
}

/** Where a run stands past its header: the CSV/TSV address and time columns (-1: none). */
export interface EnrichPosition {
  addressIndex: number;
  timeIndex: number;
  /** CSV/TSV: the user-agent column (-1: none). */
  agentIndex?: number;
  /** The input's line break, as its first record ends (`\r\n` or `\n`); null: not seen yet. */
  lineEnd?: string | null;
}

/** Columns reading one group of the answer: their fields, each after a delimiter. */
interface ColumnRun {
  cells(result: LookupResult): string;
}

/** What a run did: every record read, those answered, the failed ones by reason. */
export interface EnrichCounts {
  records: number;
  enriched: number;
  failed: Record<string, number>;
}

/** A problem with the input as a whole (no such column): the run cannot go on. */
export class EnrichInputError extends Error {}

/** What `Enricher.cut` gives: records' text for another engine, or output this one wrote. */
export type CutPiece = string | { readonly written: string };

/** The error of a record past the bound (csv_records.ts, `MAX_RECORD`). */
const OVERSIZED_MESSAGE = `Record longer than 1 MiB (${MAX_RECORD} characters), a quote left ` +
  "open?: its first line is written back as it was read, and reading resumes after it";

/** The byte-order mark, kept where it was (before the first record). */
const BOM = "\uFEFF";

/** The engine of one run. */
export class Enricher {
  readonly counts: EnrichCounts = { records: 0, enriched: 0, failed: {} };
  readonly #options: EnrichOptions;
  readonly #lookup: Lookup;
  readonly #columns: Column[];
  readonly #runs: ColumnRun[];
  /** Top-level keys of the answer that come from the security lists (`security`, `isTor`...). */
  readonly #securityKeys: ReadonlySet<string>;
  readonly #delimiter: "," | "\t";
  readonly #splitter: RecordSplitter;
  readonly #readTime = createTimeReader();
  readonly #fieldPath: string[];
  readonly #timePath: string[] | null;
  readonly #agentPath: string[] | null;
  /** Whether answers hold something a user agent changes (the default answer, userAgent, risk). */
  readonly #wantsAgent: boolean;
  /** The user agent of the record being answered (null: none). */
  #agent: string | null = null;
  /** CSV/TSV: the address, time and user-agent columns' indexes, once the header is read. */
  #addressIndex = -1;
  #timeIndex = -1;
  #agentIndex = -1;
  #header = true;
  /** Whether the first record is still to come (where a byte-order mark may be). */
  #first = true;
  /** The input's line break, from its first record: what a log's header and last row end with. */
  #lineEnd: string | null = null;

  /**
   * @param resume where another engine of the same run stands (its `position()`, past the
   *   header): this one then answers records of the same input from there on.
   */
  constructor(lookup: Lookup, options: EnrichOptions, resume?: EnrichPosition) {
    this.#lookup = lookup;
    this.#options = options;
    this.#splitter = new RecordSplitter({
      quoted: options.input === "csv" || options.input === "tsv",
    });
    this.#columns = columnsOf(options.selection);
    this.#securityKeys = new Set(
      this.#columns.filter((c) => c.security).map((c) => c.segments[0]!),
    );
    this.#delimiter = (options.input === "log" ? options.output : options.input) === "tsv"
      ? "\t"
      : ",";
    this.#runs = this.#makeRuns();
    this.#fieldPath = (options.field ?? "ip").split(".");
    this.#timePath = options.time ? options.time.split(".") : null;
    this.#agentPath = options.userAgent ? options.userAgent.split(".") : null;
    const selection = options.selection;
    this.#wantsAgent = selection === null || selection.userAgent || selection.risk;
    // A header is read (CSV, TSV) or written (a log as CSV or TSV) first; NDJSON has none.
    if (options.input === "log") this.#header = options.output !== "ndjson";
    if (options.input === "ndjson") this.#header = false;
    if (resume) {
      this.#header = false;
      this.#first = false;
      this.#addressIndex = resume.addressIndex;
      this.#timeIndex = resume.timeIndex;
      this.#agentIndex = resume.agentIndex ?? -1;
      this.#lineEnd = resume.lineEnd ?? null;
    }
  }

  /** Where the run stands once the header is read (null before): what `resume` takes. */
  position(): EnrichPosition | null {
    if (this.#header) return null;
    return {
      addressIndex: this.#addressIndex,
      timeIndex: this.#timeIndex,
      agentIndex: this.#agentIndex,
      lineEnd: this.#lineEnd,
    };
  }

  /**
   * The records `chunk` completes, in order: runs of them as text, not answered (what
   * another engine resumed from `position()` answers, with `push`, then `end`), and the
   * output of a bad record past the bound, which this engine writes. Past the header only.
   */
  cut(chunk: string): CutPiece[] {
    if (this.#header) throw new Error("Enricher.cut before the header is read");
    return this.#splitter.cut(chunk).map((piece) =>
      typeof piece === "string" ? piece : { written: this.#piece(piece) }
    );
  }

  /** The output for the records `chunk` completes. */
  push(chunk: string): string {
    const records = this.#splitter.push(chunk);
    let out = "";
    for (const record of records) out += this.#piece(record);
    return out;
  }

  /** The output for the last record, when the input did not end with a line break. */
  end(): string {
    const record = this.#splitter.end();
    return record === null ? "" : this.#piece(record);
  }

  #piece(piece: Piece): string {
    const oversized = typeof piece !== "string";
    let record = oversized ? piece.text : piece;
    // A byte-order mark stays where it was, before the first record, and is not part of it.
    let bom = "";
    if (this.#first) {
      this.#first = false;
      if (record.startsWith(BOM)) {
        bom = BOM;
        record = record.slice(1);
      }
    }
    if (this.#lineEnd === null) {
      const end = splitLineEnd(record)[1];
      if (end !== "") this.#lineEnd = end;
    }
    return bom + (oversized ? this.#oversized(record) : this.#record(record));
  }

  /** A record past the bound: written back with the reason, counted, not answered. */
  #oversized(record: string): string {
    if (this.#header && this.#options.input !== "log") {
      throw new EnrichInputError(`The header is longer than 1 MiB (${MAX_RECORD} characters)`);
    }
    const [body, end] = splitLineEnd(record);
    this.#failed("record too long");
    const answered = NOT_ANSWERED("record too long", OVERSIZED_MESSAGE);
    switch (this.#options.input) {
      case "csv":
      case "tsv":
        this.counts.records++;
        return body + this.#cells(answered) + end;
      case "ndjson":
        this.counts.records++;
        return `{"line":${JSON.stringify(body)},${JSON.stringify(this.#options.into)}:${
          JSON.stringify({ error: OVERSIZED_MESSAGE })
        }}${end}`;
      case "log":
        return this.#logRecord(record, answered);
    }
  }

  #record(record: string): string {
    switch (this.#options.input) {
      case "csv":
      case "tsv":
        return this.#csvRecord(record);
      case "ndjson":
        return this.#ndjsonRecord(record);
      case "log":
        return this.#logRecord(record);
    }
  }

  #failed(reason: string): void {
    this.counts.failed[reason] = (this.counts.failed[reason] ?? 0) + 1;
  }

  /**
   * The answer for `text` at `time`, selected: the answer, or the failure with
   * its category and message. A time before the kept history answers the
   * rest of the record, its security parts left out, with the reason.
   */
  #answer(
    text: string,
    time: Date | string | null,
  ): Answered {
    const ip = text.trim();
    if (ip === "") {
      this.#failed("no address");
      return NOT_ANSWERED("no address", "No address in this record");
    }
    if (typeof time === "string") {
      this.#failed("invalid time");
      return NOT_ANSWERED("invalid time", time);
    }
    const options: LookupOptions = {
      selection: this.#options.selection,
      lang: this.#options.lang,
      at: time ?? this.#options.at,
      userAgent: this.#wantsAgent ? this.#agent : null,
    };
    let item: LookupResult | FailedItem;
    let note: string | null = null;
    try {
      item = this.#item(ip, options);
    } catch (error) {
      if (!(error instanceof AppError) || !options.at) throw error;
      if (error.code === "bad_request") {
        // A time in the future: this record's, not the run's.
        this.#failed("invalid time");
        return NOT_ANSWERED("invalid time", error.message);
      }
      if (error.code !== "history_unavailable") throw error;
      // A time the kept history does not reach: answered now, its security parts left out.
      note = error.message;
      item = this.#item(ip, { ...options, at: null });
    }
    if ("error" in item) {
      const reason = /^Invalid IP/.test(item.error.message) ? "invalid address" : "no data";
      this.#failed(reason);
      return NOT_ANSWERED(reason, item.error.message);
    }
    if (note !== null) {
      this.#failed("time before the history");
      return {
        result: item,
        securityKnown: false,
        reason: "time before the history",
        message: note,
      };
    }
    this.counts.enriched++;
    return { result: item, securityKnown: true, reason: null, message: null };
  }

  /** What a JSON record gets: the selected answer (its security parts only when known), or the error. */
  #added(answered: Answered): Json {
    const { result, message } = answered;
    if (result === null) return { error: message };
    const answer = applySelection(result, this.#options.selection);
    if (answered.securityKnown) return answer;
    // A time before the kept history: the rest of the answer, and why not its security parts.
    const kept: Record<string, Json> = {};
    for (const [key, value] of Object.entries(answer)) {
      if (!this.#securityKeys.has(key)) kept[key] = value;
    }
    return { ...kept, error: message };
  }

  #item(ip: string, options: LookupOptions): LookupResult | FailedItem {
    const lookup = this.#lookup;
    if (lookup.item) return lookup.item(ip, options);
    try {
      return lookup(ip, options);
    } catch (error) {
      if (
        error instanceof AppError && (error.code === "invalid_ip" || error.code === "not_found")
      ) {
        return { ip, error: { status: 404, message: error.message } };
      }
      throw error;
    }
  }

  /** The added fields of a CSV/TSV row: the columns, then the error. */
  #cells(answered: Answered): string {
    const d = this.#delimiter;
    const { result, message } = answered;
    let out = "";
    if (result !== null && answered.securityKnown) {
      for (const run of this.#runs) out += run.cells(result);
    } else {
      for (const column of this.#columns) {
        const known = result !== null && !column.security;
        out += this.#cell(column, known ? result : null);
      }
    }
    return out + d + (message === null ? "" : csvField(cellText("error", message), d));
  }

  /** One added field, with its delimiter: the column's value in `result` (null: empty). */
  #cell(column: Column, result: LookupResult | null): string {
    const value = result === null ? null : column.read(result as unknown as Record<string, Json>);
    return this.#delimiter +
      csvField(cellText(column.segments.at(-1)!, value ?? null), this.#delimiter);
  }

  /**
   * The columns in runs that read one group of the answer (`geoLocation`, `security`):
   * a group that is a shared part (frozen, one object for every address of a place or
   * network) has its run's fields written once and then remembered by the object.
   */
  #makeRuns(): ColumnRun[] {
    const runs: { group: string; columns: Column[] }[] = [];
    for (const column of this.#columns) {
      const group = column.source[0]!;
      const last = runs.at(-1);
      if (last && last.group === group) last.columns.push(column);
      else runs.push({ group, columns: [column] });
    }
    return runs.map(({ group, columns }) => {
      const written = new WeakMap<object, string>();
      const write = (result: LookupResult) => {
        let out = "";
        for (const column of columns) out += this.#cell(column, result);
        return out;
      };
      return {
        cells: (result: LookupResult) => {
          const part = (result as unknown as Record<string, Json>)[group];
          if (part === null || typeof part !== "object" || !Object.isFrozen(part)) {
            return write(result);
          }
          let text = written.get(part);
          if (text === undefined) written.set(part, text = write(result));
          return text;
        },
      };
    });
  }

  #headerCells(): string {
    const d = this.#delimiter;
    const { prefix } = this.#options;
    return this.#columns.map((c) => d + csvField(prefix + c.name, d)).join("") + d +
      csvField(`${prefix}error`, d);
  }

  #csvRecord(record: string): string {
    const [body, end] = splitLineEnd(record);
    const d = this.#delimiter;
    if (this.#header) {
      this.#header = false;
      const names = parseFields(body, d).map((name) => name.trim());
      const column = this.#options.column ?? "ip";
      this.#addressIndex = names.indexOf(column);
      if (this.#addressIndex === -1) {
        throw new EnrichInputError(
          `No column ${JSON.stringify(column)} in the header (${
            names.join(", ")
          }): name it with --column`,
        );
      }
      if (this.#timePath) {
        const time = this.#timePath.join(".");
        this.#timeIndex = names.indexOf(time);
        if (this.#timeIndex === -1) {
          throw new EnrichInputError(
            `No column ${JSON.stringify(time)} in the header for --time-column`,
          );
        }
      }
      if (this.#agentPath) {
        const agent = this.#agentPath.join(".");
        this.#agentIndex = names.indexOf(agent);
        if (this.#agentIndex === -1) {
          throw new EnrichInputError(
            `No column ${JSON.stringify(agent)} in the header for --ua-column`,
          );
        }
      }
      return body + this.#headerCells() + end;
    }
    if (body === "") return record; // a blank line (a file's last line break twice)
    this.counts.records++;
    const need = Math.max(this.#addressIndex, this.#timeIndex, this.#agentIndex) + 1;
    const address = fieldAt(body, d, this.#addressIndex, need);
    if (address === null) {
      this.#failed("short row");
      return body + this.#cells(NOT_ANSWERED("short row", `Short row: fewer than ${need} fields`)) +
        end;
    }
    const time = this.#timeIndex === -1
      ? null
      : this.#readTime(fieldAt(body, d, this.#timeIndex, need) ?? "");
    this.#agent = this.#agentIndex === -1 ? null : fieldAt(body, d, this.#agentIndex, need) || null;
    return body + this.#cells(this.#answer(address, time)) + end;
  }

  #ndjsonRecord(record: string): string {
    const [body, end] = splitLineEnd(record);
    if (body.trim() === "") return record;
    this.counts.records++;
    const into = JSON.stringify(this.#options.into);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      this.#failed("malformed JSON");
      const message = `Malformed JSON: ${(error as Error).message}`;
      return `{"line":${JSON.stringify(body)},${into}:${JSON.stringify({ error: message })}}${end}`;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      this.#failed("not an object");
      const message = "Not a JSON object";
      return `{"line":${JSON.stringify(body)},${into}:${JSON.stringify({ error: message })}}${end}`;
    }
    const object = parsed as Record<string, Json>;
    const address = valueAt(object, this.#fieldPath);
    const agent = this.#agentPath === null ? undefined : valueAt(object, this.#agentPath);
    this.#agent = typeof agent === "string" && agent !== "" ? agent : null;
    const time = this.#timePath === null
      ? null
      : this.#readTime(String(valueAt(object, this.#timePath) ?? ""));
    let added: Json;
    if (typeof address !== "string") {
      this.#failed("no address");
      added = { error: `No address at ${this.#fieldPath.join(".")}` };
    } else added = this.#added(this.#answer(address, time));
    // The line's own text is kept; the answer replaces a key of that name where it stands
    // (enriching enriched output again gives it back), else goes in before the closing brace.
    if (Object.hasOwn(object, this.#options.into)) {
      const [from, to] = topLevelValueSpan(body, this.#options.into)!;
      return `${body.slice(0, from)}${JSON.stringify(added)}${body.slice(to)}${end}`;
    }
    const close = body.lastIndexOf("}");
    const empty = Object.keys(object).length === 0;
    return `${body.slice(0, close)}${empty ? "" : ","}${into}:${JSON.stringify(added)}${
      body.slice(close)
    }${end}`;
  }

  /** A log line as a record (`bad`: the line is not read, it is written with that error). */
  #logRecord(record: string, bad?: Answered): string {
    const [body, end] = splitLineEnd(record);
    // One line ending in the output, the input's (a last line without one gets it too).
    const lineEnd = end || (this.#lineEnd ?? "\n");
    if (this.#header) {
      this.#header = false;
      const d = this.#delimiter;
      return csvField("line", d) + this.#headerCells() + lineEnd + this.#logRecord(record, bad);
    }
    if (body.trim() === "") return record;
    this.counts.records++;
    let answered = bad;
    if (answered === undefined) {
      const space = body.search(/\s/);
      const address = space === -1 ? body : body.slice(0, space);
      let time: Date | string | null = null;
      if (this.#options.logTime) {
        const open = body.indexOf("[");
        const close = open === -1 ? -1 : body.indexOf("]", open);
        time = close === -1
          ? "No [time] in this line"
          : this.#readTime(body.slice(open + 1, close));
      }
      this.#agent = this.#wantsAgent ? logUserAgent(body) : null;
      answered = this.#answer(address, time);
    }
    if (this.#options.output === "ndjson") {
      return `{"line":${JSON.stringify(body)},${JSON.stringify(this.#options.into)}:${
        JSON.stringify(this.#added(answered))
      }}${lineEnd}`;
    }
    // The line is a cell enrich writes: a formula in it is neutralised, as in any CSV we write.
    return csvField(cellText("line", body), this.#delimiter) + this.#cells(answered) + lineEnd;
  }
}
