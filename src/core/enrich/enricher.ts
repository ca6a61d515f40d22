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
 * and counted by reason; the run goes on. A record whose time cannot be read,
 * or lies outside the list history, is answered in part: what does not depend
 * on the time, with the reason in its error (counted apart, as `partial`).
 * With a travel key, each record also says how far and fast its subject moved
 * since its previous record (travel.ts, travel_fields.ts).
 */

import { AppError, type ErrorCode } from "../../base/errors.ts";
import type { FailedItem, Json, LookupResult } from "../../base/types.ts";
import { cellText, csvField } from "../format/csv.ts";
import { applySelection, type FieldSelection } from "../format/select.ts";
import type { Lookup, LookupOptions } from "../lookup/lookup.ts";
import { isFailedItem, itemErrorCode, lookupItem } from "../lookup/item.ts";
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
import { createTimeReader, NO_LOG_TIME, NO_TIME } from "./record_time.ts";
import type { TimeRead } from "./time_forms.ts";
import { TravelJudge } from "./travel.ts";
import {
  fillTravel,
  TRAVEL_FIELDS,
  type TravelCounts,
  type TravelOptions,
  type TravelPart,
  travelPart,
  type TravelShape,
} from "./travel_fields.ts";

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
  /** The IANA zone of record times written without one (checkTimeZone's name); null: UTC. */
  timeZone?: string | null;
  /** Impossible travel (CSV/TSV and NDJSON, with the records' own times); null: off. */
  travel?: TravelOptions | null;
}

/** Where a run stands past its header: the CSV/TSV address, time and travel key columns (-1: none). */
export interface EnrichPosition {
  addressIndex: number;
  timeIndex: number;
  travelIndex: number;
  /** CSV/TSV: the user-agent column (-1: none). */
  agentIndex?: number;
  /** The input's line break, as its first record ends (`\r\n` or `\n`); null: not seen yet. */
  lineEnd?: string | null;
}

/** Columns reading one group of the answer: their fields, each after a delimiter. */
interface ColumnRun {
  cells(result: LookupResult): string;
}

/**
 * What a run did: every record read, those answered (in part included), those answered in
 * part by why (their security and risk left empty), the failed ones by reason.
 */
export interface EnrichCounts {
  records: number;
  enriched: number;
  partial: Record<string, number>;
  failed: Record<string, number>;
}

/** Why a record's time voids its security and risk: the codes a lookup `at` it may fail with. */
const TIME_CODES: ReadonlySet<ErrorCode> = new Set(["history_unavailable", "invalid_time"]);
const OUTSIDE_HISTORY = "time outside the list history";

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
  readonly counts: EnrichCounts = { records: 0, enriched: 0, partial: {}, failed: {} };
  readonly #options: EnrichOptions;
  readonly #lookup: Lookup;
  readonly #columns: Column[];
  readonly #runs: ColumnRun[];
  /** Top-level keys of the answer that come from the security lists (`security`, `isTor`...). */
  readonly #securityKeys: ReadonlySet<string>;
  readonly #delimiter: "," | "\t";
  readonly #splitter: RecordSplitter;
  readonly #readTime: (text: string) => TimeRead;
  readonly #fieldPath: string[];
  readonly #timePath: string[] | null;
  /** The travel key's path (a column's name as one segment); null: no travel. */
  readonly #travelPath: string[] | null;
  readonly #travelShape: TravelShape;
  /**
   * The subjects' last records, in input order: held by the run's own engine. One resumed
   * from another's position (a worker's) writes marks that engine fills (fillTravel).
   */
  readonly #judge: TravelJudge | null;
  /** CSV/TSV: the address, time, travel key and user-agent columns' indexes, once the header is read. */
  #addressIndex = -1;
  #timeIndex = -1;
  #travelIndex = -1;
  #agentIndex = -1;
  #header = true;
  /** The last record time the list history did not reach, and why (see #answer). */
  #outside = { time: NaN, note: "" };
  readonly #agentPath: string[] | null;
  /** Whether answers hold something a user agent changes (the default answer, userAgent, risk). */
  readonly #wantsAgent: boolean;
  /** The user agent of the record being answered (null: none). */
  #agent: string | null = null;
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
    this.#readTime = createTimeReader(options.timeZone ?? null);
    const travel = options.travel ?? null;
    if (travel && (options.input === "log" || !this.#timePath)) {
      throw new EnrichInputError(
        "--travel-key needs CSV, TSV or NDJSON records with their own times " +
          "(--time-column or --time-field)",
      );
    }
    const csv = options.input === "csv" || options.input === "tsv";
    this.#travelPath = travel ? (csv ? [travel.key] : travel.key.split(".")) : null;
    this.#travelShape = csv ? { delimiter: this.#delimiter } : { delimiter: null };
    this.#judge = travel && !resume ? new TravelJudge(travel.speedKmh, travel.subjects) : null;
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
      this.#travelIndex = resume.travelIndex;
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
      travelIndex: this.#travelIndex,
      agentIndex: this.#agentIndex,
      lineEnd: this.#lineEnd,
    };
  }

  /**
   * `text` (output of an engine resumed from this one's position) with its travel judged:
   * the run's engine calls it on every such output in input order. Without travel, `text`.
   */
  fillTravel(text: string): string {
    return this.#judge ? fillTravel(text, this.#judge, this.#travelShape) : text;
  }

  /** What travel came to so far (null: no travel, or an engine resumed from another). */
  travelCounts(): TravelCounts | null {
    return this.#judge?.counts() ?? null;
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
    return this.fillTravel(out);
  }

  /** The output for the last record, when the input did not end with a line break. */
  end(): string {
    const record = this.#splitter.end();
    return record === null ? "" : this.fillTravel(this.#piece(record));
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
        // Its travel cells are empty (no answer), so the row keeps the header's columns.
        return body + this.#cells(answered, this.#travel(answered, null, null)) + end;
      case "ndjson":
        this.counts.records++;
        // Its travel members are null (no answer), as every failed record's are.
        return `{"line":${JSON.stringify(body)},${JSON.stringify(this.#options.into)}:${
          this.#addedText(answered, this.#travel(answered, null, null))
        }}${end}`;
      case "log":
        return this.#logRecord(record, answered);
    }
  }

  #record(text: string): string {
    // Travel marks are lone surrogates, which well-formed text (TextDecoder's) never holds.
    const record = this.#travelPath && !text.isWellFormed() ? text.toWellFormed() : text;
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
   * The answer for `text` at `time` (a record's own time, or why it has none that can be
   * read; null: the run's `at`): the answer, or the failure with its category and message.
   * A record fails only when its address does. A time that cannot be read, or that the kept
   * history does not reach (before it, or in the future), answers the rest of the record,
   * its security parts left out, with the reason.
   */
  #answer(text: string, time: TimeRead | null): Answered {
    const ip = text.trim();
    if (ip === "") {
      this.#failed("no address");
      return NOT_ANSWERED("no address", "No address in this record");
    }
    let partial: string | null = null;
    let note: string | null = null;
    if (typeof time === "string") {
      partial = time === NO_TIME || time === NO_LOG_TIME ? "no time" : "unreadable time";
      note = time;
    }
    let at = time === null ? this.#options.at : typeof time === "string" ? null : time;
    // Logs repeat their times: the last one the history did not reach is known without a throw.
    if (at !== null && at.getTime() === this.#outside.time) {
      partial = OUTSIDE_HISTORY;
      note = this.#outside.note;
      at = null;
    }
    const options: LookupOptions = {
      selection: this.#options.selection,
      lang: this.#options.lang,
      at,
      userAgent: this.#wantsAgent ? this.#agent : null,
    };
    let item: LookupResult | FailedItem;
    try {
      item = lookupItem(this.#lookup, ip, options);
    } catch (error) {
      if (!(error instanceof AppError) || !at || !TIME_CODES.has(error.code)) throw error;
      // A time the kept history does not reach: answered now, its security parts left out.
      partial = OUTSIDE_HISTORY;
      note = error.message;
      this.#outside = { time: at.getTime(), note };
      options.at = null;
      item = lookupItem(this.#lookup, ip, options);
    }
    if (isFailedItem(item)) {
      // The core's one item lookup: the API's message, its kind by code.
      const reason = itemErrorCode(item) === "invalid_ip" ? "invalid address" : "no data";
      this.#failed(reason);
      return NOT_ANSWERED(reason, item.error.message);
    }
    this.counts.enriched++;
    if (partial === null) return { result: item, securityKnown: true, reason: null, message: null };
    this.counts.partial[partial] = (this.counts.partial[partial] ?? 0) + 1;
    return { result: item, securityKnown: false, reason: partial, message: note };
  }

  /**
   * What a JSON record gets: the selected answer (its security parts only when known), or
   * the error; `also` (why the record has no travel) joins the error.
   */
  #added(answered: Answered, also: string | null = null): Record<string, Json> {
    const { result } = answered;
    const message = joined(answered.message, also);
    if (result === null) return { error: message };
    const answer = applySelection(result, this.#options.selection);
    if (answered.securityKnown && message === null) return answer;
    // A time the record's security cannot be answered for: the rest, and why not its security.
    const kept: Record<string, Json> = {};
    for (const [key, value] of Object.entries(answer)) {
      if (answered.securityKnown || !this.#securityKeys.has(key)) kept[key] = value;
    }
    return { ...kept, error: message };
  }

  /** The JSON text a record gets under `into`: #added's, its travel fields last. */
  #addedText(answered: Answered, travel: TravelPart | null): string {
    const text = JSON.stringify(this.#added(answered, travel?.note ?? null));
    if (travel === null) return text;
    return `${text.slice(0, -1)}${text === "{}" ? "" : ","}${travel.text}}`;
  }

  /** A record's travel fields (null: no travel in this run). */
  #travel(answered: Answered, time: TimeRead | null, subject: string | null): TravelPart | null {
    const path = this.#travelPath;
    return path && travelPart(answered.result, time, subject, path.join("."), this.#travelShape);
  }

  /** The added fields of a CSV/TSV row: the columns, the travel fields (if any), then the error. */
  #cells(answered: Answered, travel: TravelPart | null = null): string {
    const d = this.#delimiter;
    const { result } = answered;
    const message = joined(answered.message, travel?.note ?? null);
    let out = "";
    if (result !== null && answered.securityKnown) {
      for (const run of this.#runs) out += run.cells(result);
    } else {
      for (const column of this.#columns) {
        const known = result !== null && !column.security;
        out += this.#cell(column, known ? result : null);
      }
    }
    if (travel !== null) out += travel.text;
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
    const travel = this.#travelPath ? TRAVEL_FIELDS : [];
    return [...this.#columns.map((c) => c.name), ...travel].map((name) =>
      d + csvField(prefix + name, d)
    ).join("") + d + csvField(`${prefix}error`, d);
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
      if (this.#travelPath) {
        const key = this.#travelPath[0]!;
        this.#travelIndex = names.indexOf(key);
        if (this.#travelIndex === -1) {
          throw new EnrichInputError(
            `No column ${JSON.stringify(key)} in the header for --travel-key`,
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
    const need =
      Math.max(this.#addressIndex, this.#timeIndex, this.#travelIndex, this.#agentIndex) +
      1;
    const address = fieldAt(body, d, this.#addressIndex, need);
    if (address === null) {
      this.#failed("short row");
      const short = NOT_ANSWERED("short row", `Short row: fewer than ${need} fields`);
      return body + this.#cells(short, this.#travel(short, null, null)) + end;
    }
    const time = this.#timeIndex === -1
      ? null
      : this.#readTime(fieldAt(body, d, this.#timeIndex, need) ?? "");
    this.#agent = this.#agentIndex === -1 ? null : fieldAt(body, d, this.#agentIndex, need) || null;
    const answered = this.#answer(address, time);
    const subject = this.#travelIndex === -1 ? null : fieldAt(body, d, this.#travelIndex, need);
    return body + this.#cells(answered, this.#travel(answered, time, subject)) + end;
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
      : this.#readTime(valueText(valueAt(object, this.#timePath)));
    let answered: Answered;
    if (typeof address !== "string") {
      this.#failed("no address");
      answered = NOT_ANSWERED("no address", `No address at ${this.#fieldPath.join(".")}`);
    } else answered = this.#answer(address, time);
    const subject = this.#travelPath && valueText(valueAt(object, this.#travelPath));
    const added = this.#addedText(answered, this.#travel(answered, time, subject));
    // The line's own text is kept; the answer replaces a key of that name where it stands
    // (enriching enriched output again gives it back), else goes in before the closing brace.
    if (Object.hasOwn(object, this.#options.into)) {
      const [from, to] = topLevelValueSpan(body, this.#options.into)!;
      return `${body.slice(0, from)}${added}${body.slice(to)}${end}`;
    }
    const close = body.lastIndexOf("}");
    const empty = Object.keys(object).length === 0;
    return `${body.slice(0, close)}${empty ? "" : ","}${into}:${added}${body.slice(close)}${end}`;
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
      let time: TimeRead | null = null;
      if (this.#options.logTime) {
        const open = body.indexOf("[");
        const close = open === -1 ? -1 : body.indexOf("]", open);
        time = close === -1 ? NO_LOG_TIME : this.#readTime(body.slice(open + 1, close));
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

/** Two messages as one (either may be null). */
function joined(first: string | null, second: string | null): string | null {
  return first === null ? second : second === null ? first : `${first}; ${second}`;
}

/** A JSON value as the text a time or a travel key is read from (absent or null: empty). */
function valueText(value: Json | undefined): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
