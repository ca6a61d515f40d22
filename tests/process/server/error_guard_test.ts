import assert from "node:assert/strict";
import { guardUncaughtErrors } from "../../../src/process/server/error_guard.ts";

Deno.test("an unhandled rejection and an uncaught error are logged and counted, and the isolate carries on", async () => {
  const lines: string[] = [];
  const errors: unknown[] = [];
  const unguard = guardUncaughtErrors((error) => errors.push(error), (line) => lines.push(line));
  try {
    Promise.reject(new Error("lost rejection"));
    setTimeout(() => {
      throw new Error("thrown in a timer");
    }, 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    unguard();
  }
  assert.equal(errors.length, 2);
  assert.match(
    lines.join("\n"),
    /unhandled promise rejection \(logged, the server carries on\): Error: lost rejection/,
  );
  assert.match(
    lines.join("\n"),
    /uncaught error \(logged, the server carries on\): Error: thrown in a timer/,
  );
});
