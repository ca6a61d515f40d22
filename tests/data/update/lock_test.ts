import assert from "node:assert/strict";
import { DataLockedError, lockDataDir } from "../../../src/data/update/lock.ts";

Deno.test("the data-directory lock: a second writer fails naming the holder, or waits for it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-lock-" });
  try {
    const first = await lockDataDir(dir, { purpose: "data update", wait: false });
    await assert.rejects(
      lockDataDir(dir, { purpose: "data", wait: false }),
      (error: Error) =>
        error instanceof DataLockedError &&
        new RegExp(`being written by process ${Deno.pid} \\(data update, since 20`).test(
          error.message,
        ),
    );
    const told: string[] = [];
    const second = lockDataDir(dir, {
      purpose: "data",
      wait: true,
      onWait: (holder) => told.push(holder),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(told.length, 1, "told once who holds it");
    first.release();
    (await second).release();
    // A waiter can be stopped.
    const held = await lockDataDir(dir, { purpose: "data", wait: false });
    const stop = new AbortController();
    const waiting = lockDataDir(dir, { purpose: "data", wait: true, signal: stop.signal });
    stop.abort();
    await assert.rejects(waiting, /was cancelled/);
    held.release();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the data-directory lock is released when its process dies (kill -9)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-lock-" });
  try {
    const code = `const f = await Deno.open(${JSON.stringify(`${dir}/.lock`)}, ` +
      `{ read: true, write: true, create: true }); await f.lock(true); console.log("held"); ` +
      `setInterval(() => {}, 1000);`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", code],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.getReader();
    await reader.read(); // "held"
    await assert.rejects(lockDataDir(dir, { purpose: "data", wait: false }), DataLockedError);
    child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();
    (await lockDataDir(dir, { purpose: "data", wait: false })).release();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
