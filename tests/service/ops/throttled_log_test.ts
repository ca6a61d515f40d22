import assert from "node:assert/strict";
import { throttledLog } from "../../../src/service/ops/throttled_log.ts";

Deno.test("a repeated failure is logged once per interval with a count, and its end once", () => {
  const lines: string[] = [];
  const clock = { ms: 0 };
  const log = throttledLog(
    "writing rate counts",
    10_000,
    (line) => lines.push(line),
    () => clock.ms,
  );
  const error = new Error("database is locked");
  for (let i = 0; i < 200; i++) {
    log.failure(error);
    clock.ms += 100; // 200 failures over 20 s
  }
  assert.equal(lines.length, 2, lines.join("\n"));
  assert.match(
    lines[0]!,
    /writing rate counts failed: database is locked \(repeats are logged every 10 s\)/,
  );
  assert.match(
    lines[1]!,
    /failed 100 more time\(s\) in the last 10 s; last error: database is locked/,
  );
  log.success();
  log.success();
  assert.equal(lines.length, 3);
  assert.match(lines[2]!, /writing rate counts works again \(after 200 failure\(s\)\)/);
  assert.ok(!lines.join("\n").includes("    at "), "no stack traces");
});
