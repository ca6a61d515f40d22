/**
 * Stop requests: the first SIGTERM or SIGINT asks the server to stop
 * gracefully, a second one says not to wait any longer.
 */

export type StopReason = "SIGTERM" | "SIGINT" | "data failed to load" | "a worker failed";

export class StopRequest {
  /** Resolves with the reason of the first request to stop. */
  readonly requested: Promise<StopReason>;
  /** Resolves on a second signal: stop waiting for requests in flight. */
  readonly hurried: Promise<void>;
  #stopping = false;
  #resolve!: (reason: StopReason) => void;
  #hurry!: () => void;
  readonly #listeners: [Deno.Signal, () => void][] = [];

  /** Listens to SIGTERM and SIGINT (SIGTERM cannot be listened to on Windows: only SIGINT there). */
  constructor() {
    this.requested = new Promise((resolve) => this.#resolve = resolve);
    this.hurried = new Promise((resolve) => this.#hurry = resolve);
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const listener = () => this.request(signal);
      try {
        Deno.addSignalListener(signal, listener);
        this.#listeners.push([signal, listener]);
      } catch {
        // Not supported on this platform (SIGTERM on Windows).
      }
    }
  }

  /** True once a stop was requested. */
  get stopping(): boolean {
    return this.#stopping;
  }

  request(reason: StopReason): void {
    if (this.#stopping) {
      this.#hurry();
      return;
    }
    this.#stopping = true;
    this.#resolve(reason);
  }

  /** Stops listening to the signals. */
  dispose(): void {
    for (const [signal, listener] of this.#listeners.splice(0)) {
      Deno.removeSignalListener(signal, listener);
    }
  }
}
