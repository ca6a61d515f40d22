/**
 * The server's V8 flags are the same however it is started. V8 lets its old
 * generation grow to several times the live heap before a full collection; a
 * long streamed bulk answer churns the record caches (every evicted record is
 * old-generation garbage), so without `--heap-growing-percent` a server's
 * memory rose 120–230 MB over a 1,000,000-address stream (docs/streamed-bulk.md).
 * The flag only takes effect on the command line (V8 reads it at start), so
 * each way of starting the server must carry it.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../../../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

/** The `--v8-flags=...` arguments in a command line. */
function v8Flags(command: string): string[] {
  return command.match(/--v8-flags=[^\s"]+/g) ?? [];
}

Deno.test("deno task start serves with a bounded heap growth", async () => {
  const { tasks } = JSON.parse(await read("deno.json"));
  assert.deepEqual(v8Flags(tasks.start), ["--v8-flags=--heap-growing-percent=50"]);
});

Deno.test("the compiled binary, the container and the systemd example use deno task start's V8 flags", async () => {
  const { tasks } = JSON.parse(await read("deno.json"));
  const expected = v8Flags(tasks.start);
  assert.deepEqual(v8Flags(tasks["compile:with-flags"]), expected, "deno.json compile:with-flags");
  const cmd = (await read("deploy/Dockerfile")).split("\n").find((line) => line.startsWith("CMD"));
  assert.deepEqual(v8Flags(cmd ?? ""), expected, "deploy/Dockerfile CMD");
  const unit = await read("deploy/ipintel.service");
  const denoRun = unit.split("\n").find((line) => /ExecStart=\S*deno run/.test(line));
  assert.deepEqual(v8Flags(denoRun ?? ""), expected, "deploy/ipintel.service (deno run)");
});
