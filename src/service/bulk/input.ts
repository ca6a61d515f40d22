/**
 * The addresses of a streamed bulk request, read as they arrive: a JSON body
 * `{"ips": [...]}` parsed incrementally (never as a whole), plain text with one
 * address a line, or NDJSON with one JSON string (or `{"ip": "..."}`) a line.
 *
 * Each parser is fed text and appends the items it completes; nothing it keeps
 * grows with the body: an item is cut at {@link ITEM_CAP} characters (no
 * address comes close; the cut item stays invalid and fails in place, echoed
 * capped as always), and JSON the body carries besides (other keys) is checked
 * and skipped, not kept.
 */

import { BadRequestError, capInput } from "../../base/errors.ts";
import type { FailedItem } from "../../base/types.ts";
import { trimBulkItem } from "./items.ts";
import { JsonIpsParser } from "./json_ips.ts";
import { ReadAhead, type ReadAheadOptions } from "./read_ahead.ts";

/** An address as given, or an item that failed before its lookup (an NDJSON line that is not one). */
export type BulkInput = string | FailedItem;

/** Longest item kept, in characters; longer items are cut and marked with `…`. */
export const ITEM_CAP = 1024;

/** A push parser of one body format. */
export interface InputParser {
  /** Parses the next piece of the body, appending the items it completes to `out`. */
  push(text: string, out: BulkInput[]): void;
  /** The body ended: appends the last item; throws a BadRequestError when it is incomplete. */
  end(out: BulkInput[]): void;
  /** The body's own user agent (JSON's `"userAgent"`, before `"ips"`), or null. */
  readonly userAgent: string | null;
}

/** The body formats, by what the request's Content-Type says. */
export type InputFormat = "json" | "text" | "ndjson";

/** A new parser for one body. */
export function inputParser(format: InputFormat): InputParser {
  switch (format) {
    case "json":
      return new JsonIpsParser(ITEM_CAP);
    case "text":
      return new LineParser(textLine);
    case "ndjson":
      return new LineParser(ndjsonLine);
  }
}

/** What a source of input batches may tell about its body (src/service/bulk/batches.ts's idle timeout). */
export interface InputProgress {
  /** performance.now() when the body last gave bytes (or reading started). */
  readonly lastReadAt: number;
  /** Stops reading the body at once, even while a batch is awaited (that one then ends the input). */
  cancel(): Promise<void>;
  /**
   * Resolves when the next batch of answers may be written on the connection
   * the body comes in on (see {@link ANSWER_QUIET_MS}); at once without `holdAnswers`.
   */
  answerable(): Promise<void>;
}

/**
 * While the body is still arriving, the answer beyond its first batch waits:
 * Deno's HTTP server (and the node:http server built on it) stops reading a
 * request body while the answer's writes are blocked, so a client that sends
 * its whole body before it reads must never see the connection fill with
 * answers first. A batch goes when the body has ended, or the read-ahead is
 * full, or the body has been quiet this long since its last byte and the last
 * batch that went this way (a client sending lines as they come, `tail -f`,
 * still gets its answers as it goes, one batch per quiet spell).
 */
export const ANSWER_QUIET_MS = 100;

export interface ReadInputOptions extends ReadAheadOptions {
  /**
   * Holds answers back while the body arrives (default true: the body and the
   * answer share a connection); false when they do not (standard input).
   */
  holdAnswers?: boolean;
  /**
   * Refuses the body (a BadRequestError, after the items before it) once this
   * many bytes of it gave no item: blank lines, the skipped rest of an overlong
   * line, JSON besides the addresses (default: no bound). Counted a read of at
   * most {@link PARSE_SLICE} bytes at a time.
   */
  maxGapBytes?: number;
}

/**
 * Body bytes an HTTP stream parses without finding an item before it refuses
 * the body. A stream is charged one unit before it reads anything and one per
 * item, so each unit pays for at most this plus one slice (and an item's
 * {@link ITEM_CAP}) of parsing: 33 KiB, so a body of filler buys little work
 * per unit, even of the slowest JSON to skip (numbers; the times are in
 * docs/streamed-bulk.md).
 */
export const HTTP_MAX_GAP_BYTES = 16 * 1024;

/** Most bytes parsed at once (a larger read is parsed in slices), so a gap is seen soon. */
export const PARSE_SLICE = 16 * 1024;

/** Batches of input items read from a body. */
export type InputBatches = AsyncGenerator<BulkInput[]> & InputProgress;

/**
 * Batches of items as the body arrives. The body is read ahead of the answer
 * (src/service/bulk/read_ahead.ts: in memory, then in a temporary file), so a client
 * that sends its whole body before reading the answer is never stuck; the
 * items are parsed only as the consumer asks for them. Stopping early cancels
 * the body. `options` bound the read-ahead (the command line reads standard
 * input only a little ahead: a pipe never deadlocks).
 */
export function readInput(
  stream: ReadableStream<Uint8Array>,
  parser: InputParser,
  options: ReadInputOptions = {},
): InputBatches {
  let ahead: ReadAhead | null = null;
  const startedAt = performance.now();
  let cancelled = false;
  let releasedAt = 0;
  const batches = (async function* (): AsyncGenerator<BulkInput[]> {
    const decoder = new TextDecoder();
    const maxGap = options.maxGapBytes ?? Infinity;
    /** Bytes read before the current piece, and since the last item. */
    let read = 0;
    let gap = 0;
    if (cancelled) return void await stream.cancel().catch(() => {});
    ahead = new ReadAhead(stream, options);
    try {
      for (;;) {
        const piece = await ahead.next();
        if (piece === null && ahead.cancelled) return;
        const out: BulkInput[] = [];
        if (piece === null) {
          parser.push(decoder.decode(), out);
          parser.end(out);
          if (out.length > 0) yield out;
          return;
        }
        for (let at = 0; at < piece.length; at += PARSE_SLICE) {
          const slice = piece.subarray(at, at + PARSE_SLICE);
          const before = out.length;
          parser.push(decoder.decode(slice, { stream: true }), out);
          gap = out.length > before ? 0 : gap + slice.length;
          if (gap >= maxGap) {
            if (out.length > 0) yield out;
            throw new BadRequestError(
              `No address in ${gap} bytes of the request body (up to byte ${
                read + at + slice.length
              }): send addresses, one a line or as {"ips": [...]}`,
            );
          }
        }
        read += piece.length;
        if (out.length > 0) yield out;
      }
    } finally {
      await ahead.cancel();
    }
  })();
  return Object.defineProperties(batches, {
    lastReadAt: { get: () => ahead?.lastReadAt ?? startedAt },
    cancel: {
      value: async () => {
        cancelled = true;
        await ahead?.cancel();
      },
    },
    answerable: {
      value: async () => {
        if (options.holdAnswers === false || ahead === null || ahead.settled) return;
        await ahead.quiet(ANSWER_QUIET_MS, releasedAt);
        releasedAt = performance.now();
      },
    },
  }) as InputBatches;
}

/** What one line yields: an item, or nothing (a blank line). */
type LineReader = (line: string, number: number, overlong: boolean) => BulkInput | null;

/**
 * Splits a body into lines (LF or CRLF); each line is kept up to ITEM_CAP
 * characters. A longer line is its item (invalid) as soon as it passes the
 * cap: the rest of it, up to its line break, is skipped unread.
 */
class LineParser implements InputParser {
  readonly userAgent = null;
  private pending = "";
  /** In the skipped rest of a line that was cut at the cap (its item is out). */
  private skipping = false;
  private number = 0;

  constructor(private readonly read: LineReader) {}

  push(text: string, out: BulkInput[]): void {
    let start = 0;
    for (;;) {
      const end = text.indexOf("\n", start);
      if (end < 0) break;
      if (this.pending === "" && !this.skipping && isEmptyLine(text, start, end)) {
        // Blank lines, counted without a string made: a body of them costs little.
        start = this.skipEmptyLines(text, start);
        continue;
      }
      if (this.add(text.slice(start, end), out)) this.finish(out);
      this.skipping = false;
      start = end + 1;
    }
    if (start < text.length) this.add(text.slice(start), out);
  }

  end(out: BulkInput[]): void {
    if (this.pending !== "" && !this.skipping) this.finish(out);
  }

  /** Counts the run of empty lines (LF or CRLF) from `at`; returns where it ends. */
  private skipEmptyLines(text: string, at: number): number {
    for (;;) {
      const code = text.charCodeAt(at);
      if (code === 0x0a) at++;
      else if (code === 0x0d && text.charCodeAt(at + 1) === 0x0a) at += 2;
      else return at;
      this.number++;
    }
  }

  /** Adds a piece of the current line; false once the line was cut at the cap (its item is out). */
  private add(piece: string, out: BulkInput[]): boolean {
    if (this.skipping) return false;
    // Spaces before the address are not kept, so they never push it past the cap.
    const text = this.pending !== ""
      ? this.pending + piece
      : isBlank(piece, 0)
      ? piece.replace(/^[ \t]+/, "")
      : piece;
    if (text.length > ITEM_CAP + 1) { // + 1: a CR may end the line
      this.pending = text.slice(0, ITEM_CAP);
      this.finish(out, true);
      this.skipping = true;
      return false;
    }
    this.pending = text;
    return true;
  }

  private finish(out: BulkInput[], overlong = false): void {
    this.number++;
    const line = this.pending.endsWith("\r") ? this.pending.slice(0, -1) : this.pending;
    const item = this.read(line, this.number, overlong);
    if (item !== null) out.push(item);
    this.pending = "";
  }
}

/** Plain text: the line is the address; blank lines are skipped. */
function textLine(line: string, _number: number, overlong: boolean): BulkInput | null {
  // Most lines have nothing to trim: skip the regular expression for them.
  const item = isBlank(line, 0) || isBlank(line, line.length - 1) ? trimBulkItem(line) : line;
  if (overlong) return `${item}…`;
  return item === "" ? null : item;
}

/** Whether text[start, end) is an empty line (nothing, or only its CR). */
function isEmptyLine(text: string, start: number, end: number): boolean {
  return end === start || (end === start + 1 && text.charCodeAt(start) === 0x0d);
}

/** Whether the character at `at` is a space or a tab. */
function isBlank(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code === 0x20 || code === 0x09;
}

/** NDJSON: a JSON string, or an object with a string `ip`; anything else fails in place. */
function ndjsonLine(line: string, number: number, overlong: boolean): BulkInput | null {
  const text = line.trim();
  if (text === "" && !overlong) return null;
  const failed = (reason: string): FailedItem => ({
    ip: capInput(overlong ? `${text}…` : text),
    error: { status: 400, message: `Invalid NDJSON line ${number}: ${reason}` },
  });
  if (overlong) return failed(`longer than ${ITEM_CAP} characters`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return failed((error as Error).message);
  }
  if (typeof value === "string") return trimBulkItem(value);
  const ip = (value as { ip?: unknown } | null)?.ip;
  if (typeof value === "object" && !Array.isArray(value) && typeof ip === "string") {
    return trimBulkItem(ip);
  }
  return failed('expected an address as a JSON string or {"ip": "..."}');
}
