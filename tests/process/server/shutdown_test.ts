import assert from "node:assert/strict";
import { SAME_STOP_MS, StopRequest } from "../../../src/process/server/shutdown.ts";

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  promise.then(() => done = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
};

Deno.test("stop requests within a second are one stop; one a second or more later hurries it", async () => {
  let now = 1000;
  const stop = new StopRequest(() => now);
  try {
    assert.equal(stop.stopping, false);
    stop.request("SIGTERM");
    assert.equal(await stop.requested, "SIGTERM");
    // The group's other copies of the signal (the deno task wrapper forwards its own).
    now += 5;
    stop.request("SIGTERM");
    now += SAME_STOP_MS - 10;
    stop.request("SIGINT");
    assert.equal(await settled(stop.hurried), false);
    now += 5; // SAME_STOP_MS after the first
    stop.request("SIGTERM");
    assert.equal(await settled(stop.hurried), true);
    assert.equal(await stop.requested, "SIGTERM");
  } finally {
    stop.dispose();
  }
});
