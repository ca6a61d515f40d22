/**
 * Runs a data job of the server (data_worker.ts) in a worker of its own: a
 * big list parsed and compiled there costs the serving isolate no time (it
 * answers /health and lookups throughout) and no memory once it ends. This
 * module does not import the builder: the worker loads it.
 */

import type { Config } from "../config.ts";

/** `ensure`: the first build when there is no manifest; `data`: missing databases; `update`: every source. */
export type DataJob = "ensure" | "data" | "update";

export type ToDataWorker = { type: "run"; job: DataJob; config: Config } | { type: "stop" };
export type FromDataWorker = { type: "done"; code: number } | { type: "failed"; message: string };

/**
 * Resolves with the job's exit code (0: every source installed), or rejects
 * with its error. `signal` asks the job to stop: it ends within moments, its
 * lock released and nothing partial installed, and the promise settles then.
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
  const stop = () => worker.postMessage({ type: "stop" } satisfies ToDataWorker);
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
    signal.removeEventListener("abort", stop);
    worker.terminate();
  });
}
