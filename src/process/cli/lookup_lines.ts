/**
 * `ipintel lookup -`: addresses from standard input, one a line, answered as
 * they are read through the same pipeline and writers as a streamed
 * `POST /bulk` (src/service/bulk/batches.ts, src/core/format/incremental.ts), so each item is the
 * same text as over HTTP. Standard output is written with back-pressure: a slow
 * reader slows the run, memory stays that of one batch.
 */

import { inputParser, readInput } from "../../service/bulk/input.ts";
import { answerBulk } from "../../service/bulk/batches.ts";
import type { FieldSelection } from "../../core/format/select.ts";
import { encodeText, type StreamFormat, streamWriter } from "../../core/format/incremental.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";

export interface StreamLookupOptions {
  format: StreamFormat;
  selection: FieldSelection | null;
  userAgent: string | null;
  lang: string | null;
  /** `--at`: the security lists as they stood then (null: now). */
  at?: Date | null;
  /** Where the lines come from and the answer goes (tests pass their own). */
  input?: ReadableStream<Uint8Array>;
  output?: WritableStream<Uint8Array>;
  /** Where the progress line goes; default: standard error when it is a terminal. */
  progress?: ((text: string) => void) | null;
}

/** Milliseconds between progress lines. */
const PROGRESS_EVERY_MS = 250;

/** Returns 0 when every line was answered (failed lines in place), 1 when a lookup met a corrupt record. */
export async function lookupStream(
  lookup: Lookup,
  options: StreamLookupOptions,
): Promise<number> {
  const progress = options.progress === undefined ? terminalProgress() : options.progress;
  // Standard input is read one chunk ahead at most, and answered at once: it and standard
  // output are separate pipes, so neither ever waits on the other.
  const input = readInput(options.input ?? Deno.stdin.readable, inputParser("text"), {
    memoryBytes: 0,
    spillBytes: 0,
    holdAnswers: false,
  });
  const events = answerBulk(input, {
    lookup,
    lang: options.lang,
    selection: options.selection,
    at: options.at,
    userAgent: () => options.userAgent,
    failInPlace: true,
  });
  const writer = streamWriter(options.format, options.selection);
  const out = (options.output ?? Deno.stdout.writable).getWriter();
  const started = performance.now();
  let shownAt = started;
  let count = 0;
  let corrupt = 0;
  // One batch is written while the next is looked up (the pipe's reader runs meanwhile);
  // a write is awaited before the next one starts, so at most two batches are held.
  let writing: Promise<void> = Promise.resolve();
  const write = async (text: string) => {
    await writing;
    writing = out.write(encodeText(text));
    writing.catch(() => {}); // its error is thrown where it is awaited, not as unhandled
  };
  try {
    let text = writer.head();
    for await (const event of events) {
      if ("stop" in event) {
        // Not reached without a budget; a stop would still close the document.
        await write(text + writer.tail(event.stop));
        await writing;
        return 1;
      }
      for (const item of event.items) if ("error" in item && item.error.status === 500) corrupt++;
      await write(text + writer.items(event.items));
      text = "";
      count += event.items.length;
      const now = performance.now();
      if (progress && now - shownAt >= PROGRESS_EVERY_MS) {
        shownAt = now;
        progress(progressLine(count, now - started, false));
      }
    }
    // A terminal line end after an XML document, as for addresses given as arguments.
    text += writer.tail(null) + (options.format === "xml" ? "\n" : "");
    if (text !== "") await write(text);
    await writing;
    progress?.(progressLine(count, performance.now() - started, true));
    return corrupt > 0 ? 1 : 0;
  } catch (error) {
    // A reader that went away (`| head`) ends the run quietly.
    if (error instanceof Deno.errors.BrokenPipe) return 0;
    throw error;
  } finally {
    await events.return(undefined);
    out.releaseLock();
  }
}

function progressLine(count: number, ms: number, last: boolean): string {
  const rate = ms > 0 ? Math.round(count / (ms / 1000)) : 0;
  return `\r${count} addresses, ${rate}/s${last ? ` in ${(ms / 1000).toFixed(1)} s\n` : ""}`;
}

/** Progress on standard error, only when it is a terminal (never into a log file or pipe). */
function terminalProgress(): ((text: string) => void) | null {
  if (!Deno.stderr.isTerminal()) return null;
  return (text) => Deno.stderr.writeSync(encodeText(text));
}
