/**
 * The worker that runs the server's data jobs (data_in_worker.ts): the first
 * build, completing missing databases, and the scheduled update. Downloads,
 * parsing, decompression and compiling all happen here, so the isolate that
 * serves never waits for them, and what a job allocated is freed with the
 * worker when it ends.
 */

/// <reference lib="deno.worker" />

import type { Config } from "../../base/config.ts";
import { ensureData, runData, runDataUpdate } from "./data.ts";
import type { DataJob, FromDataWorker, ToDataWorker } from "./data_in_worker.ts";

const stop = new AbortController();

async function run(job: DataJob, config: Config): Promise<number> {
  switch (job) {
    case "ensure":
      await ensureData(config, stop.signal);
      return 0;
    case "data":
      return await runData(config, { force: false }, stop.signal);
    case "update":
      return await runDataUpdate(config, stop.signal);
  }
}

self.onmessage = async (event: MessageEvent<ToDataWorker>) => {
  const message = event.data;
  if (message.type === "stop") return stop.abort();
  let reply: FromDataWorker;
  try {
    reply = { type: "done", code: await run(message.job, message.config) };
  } catch (error) {
    reply = { type: "failed", message: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
};
