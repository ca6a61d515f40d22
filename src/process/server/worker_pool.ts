/** The request-serving workers of `ipintel serve`, as the main isolate drives them. */

import type { Config } from "../../base/config.ts";
import type { Handoff } from "./served.ts";
import type { FromWorker, ToWorker } from "./worker_protocol.ts";

/** Longer than this past the shutdown timeout, a worker that has not stopped is terminated. */
const STOP_GRACE_MS = 2000;

type Reply<T extends FromWorker["type"]> = Extract<FromWorker, { type: T }>;

/** One worker and the replies it owes. */
class WorkerHandle {
  readonly #worker: Worker;
  readonly #waiting = new Map<FromWorker["type"], ((message: FromWorker) => void)[]>();

  constructor(
    readonly index: number,
    writeLog: (text: string) => void,
    onFailure: (message: string) => void,
  ) {
    this.#worker = new Worker(new URL("./serve_worker.ts", import.meta.url).href, {
      type: "module",
      name: `ipintel-worker-${index}`,
    });
    this.#worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      if (message.type === "log") return writeLog(message.text);
      this.#waiting.get(message.type)?.shift()?.(message);
    };
    this.#worker.onerror = (event) => {
      event.preventDefault();
      onFailure(`worker ${index} failed: ${event.message}`);
    };
  }

  post(message: ToWorker): void {
    this.#worker.postMessage(message);
  }

  /** The next reply of type `type`. */
  next<T extends FromWorker["type"]>(type: T): Promise<Reply<T>> {
    return new Promise((resolve) => {
      const queue = this.#waiting.get(type) ?? [];
      queue.push(resolve as (message: FromWorker) => void);
      this.#waiting.set(type, queue);
    });
  }

  terminate(): void {
    this.#worker.terminate();
  }
}

export class WorkerPool {
  /** Resolves with a message when a worker fails (it cannot serve any more). */
  readonly failed: Promise<string>;
  readonly #fail: (message: string) => void;
  readonly #workers: WorkerHandle[] = [];

  constructor(
    private readonly config: Config,
    private readonly counts: SharedArrayBuffer,
    private readonly writeLog: (text: string) => void,
    private readonly rateTable: SharedArrayBuffer,
    private readonly policyCounts?: { buffer: SharedArrayBuffer; isolates: number },
  ) {
    const { promise, resolve } = Promise.withResolvers<string>();
    this.failed = promise;
    this.#fail = resolve;
  }

  /** Starts `count` workers, each listening on `port` with reusePort (the main isolate's port); their ports. */
  async start(count: number, port: number): Promise<number[]> {
    const workers = Array.from({ length: count }, (_, i) => this.#spawn(i, port));
    const replies = await Promise.all(workers.map((worker) => this.#listening(worker)));
    return replies.map((reply) => reply.port);
  }

  /**
   * Hands a verified data set to every worker, which opens it without
   * switching to it yet. Throws when one cannot: the others then drop it,
   * and every worker keeps serving the set it had.
   */
  async prepare(handoff: Handoff): Promise<void> {
    const replies = this.#replies("prepared");
    for (const worker of this.#workers) worker.post({ type: "data", handoff });
    const failed = (await replies).flatMap((reply, i) =>
      reply.error === null ? [] : [`worker ${i}: ${reply.error}`]
    );
    if (failed.length) {
      for (const worker of this.#workers) worker.post({ type: "discard" });
      throw new Error(failed.join("; "));
    }
  }

  /** Every worker switches to the set it prepared; resolves once all serve it. */
  async commit(): Promise<void> {
    const replies = this.#replies("installed");
    for (const worker of this.#workers) worker.post({ type: "commit" });
    await replies;
  }

  /**
   * Stops every worker as a single server stops: `inFlight` is how many
   * requests they had when the stop began; `drained` is false when requests
   * were cut short.
   */
  stop(timeoutMs: number): { inFlight: Promise<number>; drained: Promise<boolean> } {
    const stopping = this.#workers.map((worker) => worker.next("stopping"));
    const stopped = this.#workers.map((worker) => worker.next("stopped"));
    for (const worker of this.#workers) worker.post({ type: "stop", timeoutMs });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) =>
      timer = setTimeout(resolve, timeoutMs + STOP_GRACE_MS, null)
    );
    const drained = Promise.race([Promise.all(stopped), late]).then((replies) => {
      clearTimeout(timer);
      for (const worker of this.#workers) worker.terminate();
      return replies !== null && replies.every((reply) => reply.drained);
    });
    const inFlight = Promise.race([Promise.all(stopping), late]).then((replies) =>
      (replies ?? []).reduce((sum, reply) => sum + reply.inFlight, 0)
    );
    return { inFlight, drained };
  }

  /** A second signal: workers stop waiting for requests in flight. */
  hurry(): void {
    for (const worker of this.#workers) worker.post({ type: "hurry" });
  }

  #spawn(index: number, port: number): WorkerHandle {
    const worker = new WorkerHandle(index, this.writeLog, this.#fail);
    this.#workers.push(worker);
    worker.post({
      type: "start",
      config: this.config,
      slice: index,
      counts: this.counts,
      rateTable: this.rateTable,
      policyCounts: this.policyCounts,
      port,
    });
    return worker;
  }

  /** Every worker's next reply of type `type`; rejects when a worker fails first. */
  #replies<T extends FromWorker["type"]>(type: T): Promise<Reply<T>[]> {
    return Promise.race([
      Promise.all(this.#workers.map((worker) => worker.next(type))),
      this.failed.then((message) => Promise.reject(new Error(message))),
    ]);
  }

  /** The worker's "listening" reply, or the failure that came first. */
  #listening(worker: WorkerHandle): Promise<Reply<"listening">> {
    return Promise.race([
      worker.next("listening"),
      this.failed.then((message) => Promise.reject(new Error(message))),
    ]);
  }
}
