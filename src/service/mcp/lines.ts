/**
 * Lines of a byte stream, each at most `limit` bytes: a longer line is not
 * kept but skipped to its newline and reported by its length, so one huge
 * line costs no memory and ends nothing (the SDK's own stdio reader closes
 * the session on one).
 */

import { concatBytes } from "../../base/bytes.ts";

/** A line longer than the limit, skipped: its length in bytes (its newline excluded). */
export class LongLine {
  constructor(readonly bytes: number) {}
}

/**
 * The lines of `stream` (a final line without its newline too), decoded as
 * UTF-8 without the `\n` or `\r\n` that ends them; a line of more than
 * `limit` bytes as a LongLine.
 */
export async function* boundedLines(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): AsyncGenerator<string | LongLine> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  /** Bytes of the line being skipped; -1 while the line is kept. */
  let skipped = -1;
  const take = (part: Uint8Array) => {
    if (skipped >= 0) skipped += part.length;
    else if (size + part.length > limit) {
      skipped = size + part.length;
      parts = [];
      size = 0;
    } else if (part.length > 0) {
      parts.push(part);
      size += part.length;
    }
  };
  const line = (): string | LongLine => {
    if (skipped >= 0) {
      const long = new LongLine(skipped);
      skipped = -1;
      return long;
    }
    const bytes = parts.length === 1 ? parts[0]! : concatBytes(parts, size);
    parts = [];
    size = 0;
    const text = decoder.decode(bytes);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  for await (const chunk of stream) {
    let from = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, from)) {
      take(chunk.subarray(from, newline));
      yield line();
      from = newline + 1;
    }
    // A copy: the rest waits for later chunks, and a reader may reuse its buffer.
    if (from < chunk.length) take(chunk.slice(from));
  }
  if (size > 0 || skipped >= 0) yield line();
}
