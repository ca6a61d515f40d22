/**
 * Runs a data job of the server (data_worker.ts) in a worker of its own: a
 * big list parsed and compiled there costs the serving isolate no time (it
 * answers /health and lookups throughout) and no memory once it ends. This
 * module does not import the builder: the worker loads it.
 */

import type { Config } from "../../base/config.ts";

/** `ensure`: the first build when there is no manifest; `data`: missing databases; `update`: every source. */
export type DataJob = "ensure" | "data" | "update";

export type ToDataWorker = { type: "run"; job: DataJob; config: Config } | { type: "stop" };
export type FromDataWorker = { type: "done"; code: number } | { type: "failed"; message: string };

/** How long a stopped job may take to end on its own before its worker is terminated. */
const STOP_GRACE_MS = 5000;

/**
 * Resolves with the job's exit code (0: every source installed), or rejects
 * with its error. `signal` asks the job to stop: it ends within moments, its
 * lock released and nothing partial installed, and the promise settles then
 * (after STOP_GRACE_MS at the latest: the worker is terminated).
 */
export function runDataJobInWorker(
  job: DataJob,
  config: Config,
  signal: AbortSignal,
): Promise<number> {
  const worker = new Worker(new URL("./data_worker.ts", import.meta.url).href, {
    type: "module",
    name: `ipintel-data-${job}`,
  });
  const { promise, resolve, reject } = Promise.withResolvers<number>();
  let grace: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    worker.postMessage({ type: "stop" } satisfies ToDataWorker);
    // A compile checks the stop request between its steps; one that runs on is ended.
    // Its lock goes with it (the descriptor closes), and the next run clears its temporaries.
    grace = setTimeout(() => reject(new Error(`the data ${job} was stopped`)), STOP_GRACE_MS);
  };
  signal.addEventListener("abort", stop, { once: true });
  worker.onmessage = (event: MessageEvent<FromDataWorker>) => {
    const reply = event.data;
    if (reply.type === "done") resolve(reply.code);
    else reject(new Error(reply.message));
  };
  worker.onerror = (event) => {
    event.preventDefault();
    reject(new Error(`the data ${job} worker failed: ${event.message}`));
  };
  worker.postMessage({ type: "run", job, config } satisfies ToDataWorker);
  if (signal.aborted) stop();
  return promise.finally(() => {
    clearTimeout(grace);
    signal.removeEventListener("abort", stop);
    worker.terminate();
  });
}
