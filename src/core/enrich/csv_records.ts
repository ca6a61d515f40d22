/**
 * CSV and TSV records as `ipintel enrich` reads and writes them (RFC 4180):
 * a record ends at a line break outside quotes, so a quoted field may hold
 * delimiters, quotes (doubled) and line breaks. A record is kept as the text it
 * was read as and written back unchanged; only the fields enrich reads are
 * parsed, and the fields it adds are quoted when they need it.
 */

/**
 * The most characters one record may hold: 1 MiB (1,048,576 UTF-16 code units, what a
 * JavaScript string counts). A record past it is a bad record (`Oversized`): its first line
 * is written back with the reason, and reading resumes after that line, outside quotes.
 * So a stray quote costs one row, and what is held and scanned again stays within the
 * bound: time and memory linear in the input (docs/enrich.md).
 */
export const MAX_RECORD = 1 << 20;

/**
 * A record longer than `MAX_RECORD`: the text of its first line (its line break
 * included), written back as it was read with the reason as its error.
 */
export class Oversized {
  constructor(readonly text: string) {}
}

/** What a splitter gives: a whole record's text, or a bad one past the bound. */
export type Piece = string | Oversized;

/**
 * Splits text into whole records, carrying an unfinished one (a quote still
 * open, or no line break yet) to the next chunk. Each record keeps its line
 * break (`\n` or `\r\n`), so it is written back as it came. Without `quoted`
 * (NDJSON, logs), every line break ends a record: an Apache log's `\"` or a
 * malformed JSON line's stray quote cannot join lines. A record past `max`
 * characters (`MAX_RECORD`) is `Oversized`.
 */
export class RecordSplitter {
  readonly #quoted: boolean;
  readonly #max: number;
  #rest = "";
  #inQuotes = false;
  /** Where scanning for quotes resumes in #rest (what is before it was scanned). */
  #scanned = 0;
  /**
   * A line already past the bound with no line break yet: its parts, joined once it ends
   * (added up, not concatenated and scanned again per chunk).
   */
  #long: string[] | null = null;

  constructor(options: { quoted?: boolean; max?: number } = {}) {
    this.#quoted = options.quoted ?? true;
    this.#max = options.max ?? MAX_RECORD;
  }

  /** The records completed by `chunk`, in order. */
  push(chunk: string): Piece[] {
    const records: Piece[] = [];
    this.#take(chunk, records);
    return records;
  }

  /**
   * The records completed by `chunk`: runs of whole records, each run as one string
   * (what `push` gives, joined, without cutting it into records), and each bad record
   * apart, in order. None: `[]`.
   */
  cut(chunk: string): Piece[] {
    return this.#take(chunk, null);
  }

  /** The last record, if the input did not end with a line break (or ended inside quotes). */
  end(): Piece | null {
    const rest = this.#rest;
    const long = this.#long;
    this.#rest = "";
    this.#scanned = 0;
    this.#inQuotes = false;
    this.#long = null;
    if (long !== null) return new Oversized(long.join(""));
    return rest === "" ? null : rest;
  }

  /** Adds `chunk`; returns the runs of records it completes, each record also put in `records`. */
  #take(chunk: string, records: Piece[] | null): Piece[] {
    const runs: Piece[] = [];
    if (this.#long !== null) {
      const newline = chunk.indexOf("\n");
      if (newline === -1) {
        this.#long.push(chunk);
        return runs;
      }
      this.#long.push(chunk.slice(0, newline + 1));
      const bad = new Oversized(this.#long.join(""));
      this.#long = null;
      records?.push(bad);
      runs.push(bad);
      chunk = chunk.slice(newline + 1);
    }
    const text = this.#rest + chunk;
    let runStart = 0;
    let start = 0;
    for (;;) {
      start = this.#quoted
        ? this.#scanQuoted(text, start, records)
        : this.#scanLines(text, start, records);
      if (text.length - start <= this.#max) break;
      // The record from `start` is past the bound: its first line is a bad record, and
      // reading resumes after it, outside quotes. (When a quote it opened ran on, that line
      // holds an odd number of quotes, so every line break scanned since then ends a record:
      // the text is scanned again once, never over and over.)
      if (start > runStart) runs.push(text.slice(runStart, start));
      const newline = text.indexOf("\n", start);
      if (newline === -1) {
        this.#long = [text.slice(start)];
        this.#rest = "";
        this.#scanned = 0;
        this.#inQuotes = false;
        return runs;
      }
      const bad = new Oversized(text.slice(start, newline + 1));
      records?.push(bad);
      runs.push(bad);
      start = runStart = newline + 1;
      this.#scanned = start;
      this.#inQuotes = false;
    }
    if (start > runStart) runs.push(text.slice(runStart, start));
    this.#rest = text.slice(start);
    this.#scanned -= start;
    return runs;
  }

  /**
   * Where the unfinished record of `text` starts (records from `start` put in `records`):
   * a quote-aware scan from `#scanned`, which it leaves at the end of `text`. A record that
   * ends past the bound is left unfinished, for `#take` to cut.
   */
  #scanQuoted(text: string, start: number, records: Piece[] | null): number {
    let i = this.#scanned;
    let inQuotes = this.#inQuotes;
    // The next quote at or after `i` (-1: none in the rest of the text), found once, not per line.
    let quote = text.indexOf('"', i);
    for (;;) {
      const newline = text.indexOf("\n", i);
      if (newline === -1) break;
      if (quote !== -1 && quote < i) quote = text.indexOf('"', i);
      if (quote === -1 || quote > newline) {
        // No quote before the line break: it ends the record unless a quote is open.
        if (!inQuotes) {
          if (newline + 1 - start > this.#max) return start;
          records?.push(text.slice(start, newline + 1));
          start = newline + 1;
        }
        i = newline + 1;
      } else {
        inQuotes = !inQuotes;
        i = quote + 1;
      }
    }
    // Quotes after the last line break are counted now, and not scanned again.
    for (let q = text.indexOf('"', i); q !== -1; q = text.indexOf('"', q + 1)) inQuotes = !inQuotes;
    this.#scanned = text.length;
    this.#inQuotes = inQuotes;
    return start;
  }

  /** Where the unfinished line of `text` starts (lines from `start` put in `records`). */
  #scanLines(text: string, start: number, records: Piece[] | null): number {
    let newline = text.indexOf("\n", Math.max(start, this.#scanned));
    for (; newline !== -1; newline = text.indexOf("\n", start)) {
      if (newline + 1 - start > this.#max) return start;
      records?.push(text.slice(start, newline + 1));
      start = newline + 1;
    }
    this.#scanned = text.length;
    return start;
  }
}

/** A record without its line break, and the line break (`"\n"`, `"\r\n"` or `""` at the end). */
export function splitLineEnd(record: string): [string, string] {
  if (record.endsWith("\r\n")) return [record.slice(0, -2), "\r\n"];
  if (record.endsWith("\n")) return [record.slice(0, -1), "\n"];
  return [record, ""];
}

/**
 * The fields of one record (without its line break), unquoted. A record
 * without quotes (the usual case) is split directly.
 */
export function parseFields(record: string, delimiter: string): string[] {
  if (!record.includes('"')) return record.split(delimiter);
  const fields: string[] = [];
  let field = "";
  let i = 0;
  let quoted = false;
  while (i < record.length) {
    const c = record[i]!;
    if (quoted) {
      if (c === '"') {
        if (record[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += c;
    } else if (c === '"') quoted = true;
    else if (c === delimiter) {
      fields.push(field);
      field = "";
    } else field += c;
    i++;
  }
  fields.push(field);
  return fields;
}

/**
 * The `index`th field of a record (unquoted), or null when the record has
 * fewer fields; `count` fields at least must be there (a short row is null).
 */
export function fieldAt(
  record: string,
  delimiter: string,
  index: number,
  count: number,
): string | null {
  if (!record.includes('"')) {
    // Walk the delimiters without splitting the whole record.
    let start = 0;
    for (let n = 0; n < index; n++) {
      const next = record.indexOf(delimiter, start);
      if (next === -1) return null;
      start = next + 1;
    }
    let end = record.indexOf(delimiter, start);
    let fields = index + 1;
    for (let at = end; at !== -1 && fields < count; at = record.indexOf(delimiter, at + 1)) {
      fields++;
    }
    if (fields < count) return null;
    if (end === -1) end = record.length;
    return record.slice(start, end);
  }
  const fields = parseFields(record, delimiter);
  return fields.length < count ? null : fields[index] ?? null;
}
