/**
 * CSV and TSV records as `ipintel enrich` reads and writes them (RFC 4180):
 * a record ends at a line break outside quotes, so a quoted field may hold
 * delimiters, quotes (doubled) and line breaks. A record is kept as the text it
 * was read as and written back unchanged; only the fields enrich reads are
 * parsed, and the fields it adds are quoted when they need it.
 */

/**
 * Splits text into whole records, carrying an unfinished one (a quote still
 * open, or no line break yet) to the next chunk. Each record keeps its line
 * break (`\n` or `\r\n`), so it is written back as it came. Without `quoted`
 * (NDJSON, logs), every line break ends a record: an Apache log's `\"` or a
 * malformed JSON line's stray quote cannot join lines.
 */
export class RecordSplitter {
  readonly #quoted: boolean;
  #rest = "";
  #inQuotes = false;
  /** Where scanning for quotes resumes in #rest (what is before it was scanned). */
  #scanned = 0;

  constructor(options: { quoted?: boolean } = {}) {
    this.#quoted = options.quoted ?? true;
  }

  /** The records completed by `chunk`, in order. */
  push(chunk: string): string[] {
    const records: string[] = [];
    this.#take(chunk, records);
    return records;
  }

  /**
   * The text of the records completed by `chunk`, whole, as one string (`""`: none):
   * what `push` gives, joined, without cutting it into records.
   */
  cut(chunk: string): string {
    return this.#take(chunk, null);
  }

  /** The last record, if the input did not end with a line break (or ended inside quotes). */
  end(): string | null {
    const rest = this.#rest;
    this.#rest = "";
    this.#scanned = 0;
    this.#inQuotes = false;
    return rest === "" ? null : rest;
  }

  /** Adds `chunk`; returns the text of the records it completes, each also put in `records`. */
  #take(chunk: string, records: string[] | null): string {
    const text = this.#rest + chunk;
    const start = this.#quoted ? this.#scanQuoted(text, records) : scanLines(text, records);
    this.#rest = text.slice(start);
    return text.slice(0, start);
  }

  /** Where the last whole record of `text` ends, a quote-aware scan (records put in `records`). */
  #scanQuoted(text: string, records: string[] | null): number {
    let start = 0;
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
          records?.push(text.slice(start, newline + 1));
          start = newline + 1;
        }
        i = newline + 1;
      } else {
        inQuotes = !inQuotes;
        i = quote + 1;
      }
    }
    // Quotes after the last line break are scanned again with the rest (a few bytes).
    const quoteTail = text.indexOf('"', i);
    if (quoteTail !== -1) {
      for (let q = quoteTail; q !== -1; q = text.indexOf('"', q + 1)) inQuotes = !inQuotes;
    }
    this.#scanned = text.length - start;
    this.#inQuotes = inQuotes;
    return start;
  }
}

/** Where the last whole line of `text` ends (lines put in `records`). */
function scanLines(text: string, records: string[] | null): number {
  if (records === null) return text.lastIndexOf("\n") + 1;
  let start = 0;
  for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
    records.push(text.slice(start, newline + 1));
    start = newline + 1;
  }
  return start;
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

/** Fields that must be quoted: holding the delimiter (comma or tab), a quote, CR or LF. */
const NEEDS_QUOTES: Readonly<Record<string, RegExp>> = { ",": /[",\r\n]/, "\t": /["\t\r\n]/ };

/** One field as written: quoted, its quotes doubled, when it holds the delimiter, a quote, CR or LF. */
export function quoteField(text: string, delimiter: string): string {
  const safe = text.isWellFormed() ? text : text.toWellFormed();
  const needs = NEEDS_QUOTES[delimiter];
  const quoted = needs ? needs.test(safe) : safe.includes(delimiter) || /["\r\n]/.test(safe);
  return quoted ? `"${safe.replaceAll('"', '""')}"` : safe;
}
