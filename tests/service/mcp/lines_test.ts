/** boundedLines(): lines of a byte stream, each bounded; a longer one skipped to its newline. */

import assert from "node:assert/strict";
import { boundedLines, LongLine } from "../../../src/service/mcp/lines.ts";

const encoder = new TextEncoder();

/** The lines of `chunks` (texts, each one chunk) with a limit of `limit` bytes. */
async function linesOf(chunks: string[], limit: number): Promise<(string | number)[]> {
  const stream = ReadableStream.from(chunks.map((c) => encoder.encode(c)));
  const out: (string | number)[] = [];
  for await (const line of boundedLines(stream, limit)) {
    out.push(line instanceof LongLine ? line.bytes : line);
  }
  return out;
}

const CASES: { chunks: string[]; limit: number; lines: (string | number)[]; name: string }[] = [
  { name: "lines in one chunk", chunks: ["a\nbb\n"], limit: 10, lines: ["a", "bb"] },
  {
    name: "a line across chunks",
    chunks: ["ab", "cd", "e\nf\n"],
    limit: 10,
    lines: ["abcde", "f"],
  },
  { name: "CRLF", chunks: ["a\r\nb\r", "\n"], limit: 10, lines: ["a", "b"] },
  { name: "a last line without newline", chunks: ["a\nb"], limit: 10, lines: ["a", "b"] },
  { name: "blank lines kept", chunks: ["\n\na\n"], limit: 10, lines: ["", "", "a"] },
  { name: "a line of exactly the limit", chunks: ["abcd\n"], limit: 4, lines: ["abcd"] },
  { name: "a long line in one chunk", chunks: ["abcde\nok\n"], limit: 4, lines: [5, "ok"] },
  {
    name: "a long line across chunks, then more",
    chunks: ["ab", "cdef", "gh\nx", "y\n"],
    limit: 4,
    lines: [8, "xy"],
  },
  { name: "a long last line", chunks: ["ok\nabcdef"], limit: 4, lines: ["ok", 6] },
  { name: "a line counted in bytes", chunks: ["\u00e9\u00e9\u00e9\n"], limit: 4, lines: [6] },
];

for (const c of CASES) {
  Deno.test(`boundedLines(): ${c.name}`, async () => {
    assert.deepEqual(await linesOf(c.chunks, c.limit), c.lines);
  });
}

Deno.test("boundedLines(): a UTF-8 character split between chunks is decoded whole", async () => {
  const bytes = encoder.encode("\u00e9\n");
  const stream = ReadableStream.from([bytes.subarray(0, 1), bytes.subarray(1)]);
  const lines = [];
  for await (const line of boundedLines(stream, 10)) lines.push(line);
  assert.deepEqual(lines, ["\u00e9"]);
});
