/** `lookupStream`'s writing: one batch in flight, a reader going away ends the run quietly. */

import assert from "node:assert/strict";
import { lookupStream } from "../../../src/process/cli/lookup_lines.ts";
import { NotFoundError } from "../../../src/base/errors.ts";
import { Lookup } from "../../../src/core/lookup/lookup.ts";
import type { FailedItem } from "../../../src/base/types.ts";
import { fixtureLookup } from "../../_helpers.ts";

/** Every address fails in place (no data needed): an item a line all the same. */
const lookup = new class extends Lookup {
  override find(ip: string): never {
    throw new NotFoundError(ip, null);
  }
  override item(ip: string): FailedItem {
    return { ip, error: { status: 404, message: new NotFoundError(ip, null).message } };
  }
}(await fixtureLookup());

/** `batches` reads of 256 lines each, counting the reads asked for. */
function lines(batches: number) {
  let reads = 0;
  const line = new TextEncoder().encode("192.0.2.1\n".repeat(256));
  const input = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (reads++ === batches) controller.close();
      else controller.enqueue(line);
    },
  });
  return { input, reads: () => reads };
}

/** `lookup -` as NDJSON from `input` to `output`, no progress line. */
function ndjsonStream(input: ReadableStream<Uint8Array>, output: WritableStream<Uint8Array>) {
  const options = { format: "ndjson", selection: null, userAgent: null, lang: null } as const;
  return lookupStream(lookup, { ...options, input, output, progress: null });
}

Deno.test("lookup - writes every batch in order, the last one awaited before it returns", async () => {
  const { input } = lines(10);
  const chunks: string[] = [];
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      await new Promise((resolve) => setTimeout(resolve, 1)); // a slow reader
      chunks.push(new TextDecoder().decode(chunk));
    },
  });
  const code = await ndjsonStream(input, output);
  assert.equal(code, 0);
  const items = chunks.join("").split("\n").filter((l) => l !== "");
  assert.equal(items.length, 2560, "every line answered, the last batch included");
  assert.equal(JSON.parse(items[0]!).error.status, 404);
});

Deno.test("lookup - stops reading and returns 0 when the reader goes away (| head)", async () => {
  const { input, reads } = lines(100);
  let writes = 0;
  const output = new WritableStream<Uint8Array>({
    write() {
      if (++writes === 2) throw new Deno.errors.BrokenPipe("broken pipe");
    },
  });
  const code = await ndjsonStream(input, output);
  assert.equal(code, 0);
  assert.ok(reads() < 10, `stopped reading after the broken pipe (read ${reads()} chunks)`);
});
