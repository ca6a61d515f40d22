/** The body read ahead of its answer (src/service/bulk/read_ahead.ts, through readInput): memory, then a file. */

import assert from "node:assert/strict";
import { type BulkInput, inputParser, readInput } from "../../../src/service/bulk/input.ts";
import { ReadAhead } from "../../../src/service/bulk/read_ahead.ts";

const encoder = new TextEncoder();

/** A body of `chunks` chunks of `lines` numbered lines each; counts the chunks pulled. */
function numberedBody(chunks: number, lines: number) {
  const state = { pulls: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulls === chunks) return controller.close();
      const from = state.pulls++ * lines;
      let text = "";
      for (let i = from; i < from + lines; i++) text += `10.0.${i >> 8 & 255}.${i & 255} ${i}\n`;
      controller.enqueue(encoder.encode(text));
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

/** Lets the pump run: a few turns of the event loop, file operations included. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

async function filesIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names;
}

Deno.test("the whole body is read before the first batch is taken, spilled past the memory bound, and every item comes back in order", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { stream, state } = numberedBody(200, 100); // 20,000 lines, about 400 KB
    const ahead = new ReadAhead(stream, { memoryBytes: 16 * 1024, spillDir: dir });
    while (state.pulls < 200) await settle(); // a client that uploads first: nobody takes anything
    await settle();
    const held = ahead.heldBytes;
    assert.ok(held.memory <= 16 * 1024 + 4096, `${held.memory} bytes in memory`);
    assert.ok(held.file > 300_000, `${held.file} bytes in the file`);
    // The file is unlinked as soon as it is open: nothing is left in the directory.
    assert.deepEqual(await filesIn(dir), []);
    let text = "";
    const decoder = new TextDecoder();
    for (let piece = await ahead.next(); piece !== null; piece = await ahead.next()) {
      text += decoder.decode(piece, { stream: true });
    }
    const lines = text.split("\n").filter((line) => line !== "");
    assert.equal(lines.length, 20_000);
    lines.forEach((line, i) => assert.equal(Number(line.split(" ")[1]), i, `line ${i} in order`));
    await ahead.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reading and taking at once keeps the order across memory and file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { stream } = numberedBody(300, 37);
    const items: string[] = [];
    // Small bounds so pieces go to memory, to the file and back to memory many times.
    const batches = readInput(stream, inputParser("text"), { memoryBytes: 2048, spillDir: dir });
    let taken = 0;
    for await (const batch of batches) {
      for (const item of batch) items.push(item as string);
      if (++taken % 3 === 0) await settle(); // a reader slower than the body now and then
    }
    assert.equal(items.length, 300 * 37);
    items.forEach((item, i) => assert.equal(Number(item.split(" ")[1]), i));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without a file (spillBytes 0), reading stops at the memory bound until the answer catches up", async () => {
  const { stream, state } = numberedBody(1000, 100);
  const batches = readInput(stream, inputParser("text"), { memoryBytes: 8192, spillBytes: 0 });
  await batches.next();
  await settle();
  const pulls = state.pulls;
  assert.ok(pulls < 10, `${pulls} chunks read for an 8 KB bound`);
  await settle();
  assert.equal(state.pulls, pulls, "nothing more read while nothing is taken");
  await batches.next();
  await settle();
  assert.ok(state.pulls > pulls, "taking a batch makes room");
  await batches.return(undefined);
  assert.equal(state.cancelled, true, "stopping early cancels the body");
});

Deno.test("the spill file is bounded: past spillBytes the pump waits", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { stream, state } = numberedBody(10_000, 100);
    const ahead = new ReadAhead(stream, {
      memoryBytes: 4096,
      spillBytes: 64 * 1024,
      spillDir: dir,
    });
    await settle();
    while (ahead.heldBytes.file < 64 * 1024 && !state.cancelled) await settle();
    const pulls = state.pulls;
    await settle();
    assert.equal(state.pulls, pulls, "nothing more read past the bound");
    assert.ok(ahead.heldBytes.file < 64 * 1024 + 4096);
    await ahead.cancel();
    assert.equal(state.cancelled, true);
    assert.equal(await ahead.next(), null, "a cancelled body gives nothing more");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a body that fails after a while: its error reaches the reader after the bytes before it", async () => {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 3) controller.enqueue(encoder.encode("8.8.8.8\n"));
      else controller.error(new Error("connection reset"));
    },
  });
  const batches = readInput(stream, inputParser("text"));
  const items: BulkInput[] = [];
  await assert.rejects(async () => {
    for await (const batch of batches) items.push(...batch);
  }, /connection reset/);
  assert.equal(items.length, 3);
});

Deno.test("cancel() ends a batch that waits on a body that sends nothing", async () => {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode("8.8.8.8\n1.1"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const batches = readInput(stream, inputParser("text"));
  assert.deepEqual((await batches.next()).value, ["8.8.8.8"]);
  const waiting = batches.next(); // the body never sends the rest
  await settle();
  await batches.cancel();
  assert.equal((await waiting).done, true, "the waiting batch ends, without the half line");
  assert.equal(cancelled, true);
});
