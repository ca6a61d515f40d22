/** answerBulk's idle timeout: a stream where nothing moves ends with its final record (status 408). */

import assert from "node:assert/strict";
import { inputParser, readInput } from "../../../src/service/bulk/input.ts";
import { answerBulk, type BulkEvent, IdleBodyError } from "../../../src/service/bulk/batches.ts";
import { NotFoundError } from "../../../src/base/errors.ts";
import { Lookup } from "../../../src/core/lookup/lookup.ts";
import type { FailedItem } from "../../../src/base/types.ts";
import { fixtureLookup } from "../../_helpers.ts";
import type { BulkItem, BulkStop } from "../../../src/base/types.ts";

/** Every address fails in place (no data needed): an item an address all the same. */
const lookup = new class extends Lookup {
  override find(ip: string): never {
    throw new NotFoundError(ip, null);
  }
  override item(ip: string): FailedItem {
    return { ip, error: { status: 404, message: new NotFoundError(ip, null).message } };
  }
}(await fixtureLookup());

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A body that sends `text` and then nothing, never ending; records a cancel. */
function stalledBody(text: string) {
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (text !== "") controller.enqueue(encoder.encode(text));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

function answer(stream: ReadableStream<Uint8Array>, idleTimeoutMs: number, batchSize = 10) {
  return answerBulk(readInput(stream, inputParser("text")), {
    lookup,
    lang: null,
    userAgent: () => null,
    batchSize,
    idleTimeoutMs,
  });
}

const itemsOf = (event: IteratorResult<BulkEvent>): BulkItem[] =>
  (event.value as { items: BulkItem[] }).items;
const stopOf = (event: IteratorResult<BulkEvent>): BulkStop =>
  (event.value as { stop: BulkStop }).stop;

Deno.test("an upload that stalls ends with the final record: what was answered, where to resume", async () => {
  const { stream, state } = stalledBody("192.0.2.1\n192.0.2.2\n192.0.2.3\n192.0.2.4");
  const events = answer(stream, 200);
  assert.equal(itemsOf(await events.next()).length, 3);
  const stop = stopOf(await events.next());
  assert.deepEqual(stop, {
    status: 408,
    message:
      "Nothing read or written for 0.2 s: 3 addresses answered, send the rest from address 4",
    answered: 3,
    retryAfter: null,
  });
  assert.equal((await events.next()).done, true);
  assert.equal(state.cancelled, true, "the body is let go");
});

Deno.test("a body that sends nothing at all fails before the first answer (the caller answers with a status)", async () => {
  const { stream, state } = stalledBody("");
  const events = answer(stream, 100);
  await assert.rejects(events.next(), (error: unknown) => {
    assert.ok(error instanceof IdleBodyError);
    assert.equal(error.message, "The request body sent nothing for 0.1 s: no address answered");
    return true;
  });
  assert.equal(state.cancelled, true);
});

Deno.test("a client that stops reading: its body is let go at the timeout, and its next read gets the final record", async () => {
  const { stream, state } = stalledBody("192.0.2.9\n".repeat(100)); // the upload stops too
  const events = answer(stream, 100);
  assert.equal(itemsOf(await events.next()).length, 10);
  while (!state.cancelled) await sleep(20); // the consumer holds its batch: nothing moves
  const stop = stopOf(await events.next());
  assert.equal(stop.status, 408);
  assert.equal(stop.answered, 10);
  assert.match(stop.message, /^Nothing read or written for 0\.1 s: 10 addresses answered/);
  assert.equal((await events.next()).done, true);
});

Deno.test("a slow stream that keeps moving is never cut: bytes read or batches taken reset the clock", async () => {
  // The body trickles a line every 20 ms; the answer is taken every 20 ms: each well inside 1 s.
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleep(20);
      if (sent++ === 60) controller.close();
      else controller.enqueue(encoder.encode(`192.0.2.${sent}\n`));
    },
  }, { highWaterMark: 0 });
  const events = answer(stream, 1000, 1);
  let items = 0;
  for await (const event of events) {
    assert.ok("items" in event, `no stop: ${JSON.stringify(event)}`);
    items += event.items.length;
    await sleep(20);
  }
  assert.equal(items, 60);
});

Deno.test("without an idle timeout a stalled body is waited for (the command line's stdin)", async () => {
  const { stream, state } = stalledBody("192.0.2.1\n");
  const input = readInput(stream, inputParser("text"));
  const events = answerBulk(input, { lookup, lang: null, userAgent: () => null });
  assert.equal(itemsOf(await events.next()).length, 1);
  const next = events.next();
  const outcome = await Promise.race([next.then(() => "moved"), sleep(300).then(() => "waiting")]);
  assert.equal(outcome, "waiting");
  assert.equal(state.cancelled, false);
  await input.cancel(); // what an idle timeout would do: the waiting batch ends the stream
  assert.equal((await next).done, true);
  assert.equal(state.cancelled, true);
});
