import assert from "node:assert/strict";
import { LogSink, type Output } from "../../../src/service/ops/log_sink.ts";

const decode = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join("");

Deno.test("LogSink writes whole texts in order, and flush() waits for them", async () => {
  const written: Uint8Array[] = [];
  const out: Output = {
    write: async (bytes) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      // Partial writes: the sink writes the rest.
      const n = Math.min(bytes.length, 7);
      written.push(bytes.slice(0, n));
      return n;
    },
  };
  const sink = new LogSink({ out, onDrop: () => assert.fail("nothing to drop") });
  sink.write("one\n");
  sink.write("two\nthree\n");
  await sink.flush(5000);
  assert.equal(decode(written), "one\ntwo\nthree\n");
});

Deno.test("LogSink: a closed pipe drops and counts the lines, never throws, says so once", async () => {
  let dropped = 0;
  const warnings: string[] = [];
  const out: Output = { write: () => Promise.reject(new Deno.errors.BrokenPipe("Broken pipe")) };
  const sink = new LogSink({ out, onDrop: (n) => dropped += n, warn: (l) => warnings.push(l) });
  sink.write("a\nb\n");
  await sink.flush(5000);
  sink.write("c\n");
  await sink.flush(5000);
  assert.equal(dropped, 3);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /log lines dropped \(Broken pipe\)/);
});

Deno.test("LogSink: a stuck pipe holds nobody up; past the queue's bound lines are dropped and counted", async () => {
  let dropped = 0;
  const { promise: never, resolve } = Promise.withResolvers<number>();
  const out: Output = { write: () => never };
  const sink = new LogSink({
    out,
    maxQueuedBytes: 100,
    onDrop: (n) => dropped += n,
    warn: () => {},
  });
  const line = "x".repeat(39) + "\n"; // 40 bytes
  for (let i = 0; i < 10; i++) sink.write(line); // returns at once each time
  // The 100 bytes hold the line being written and one waiting: eight are dropped.
  assert.equal(dropped, 8);
  const started = performance.now();
  await sink.flush(50); // bounded even though the write never ends
  assert.ok(performance.now() - started < 5000);
  resolve(40);
});
