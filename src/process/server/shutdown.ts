/**
 * Stop requests: the first SIGTERM or SIGINT asks the server to stop
 * gracefully; another one at least a second later says not to wait any longer.
 *
 * Signals within that second are the same stop: `kill -TERM -PGID`, systemd
 * and container runtimes signal every process of the group, and the
 * `deno task` wrapper forwards what it got to the server again, so one
 * operator action can reach the server twice within milliseconds.
 */

export type StopReason = "SIGTERM" | "SIGINT" | "data failed to load" | "a worker failed";

/** How long after the first request another one is still the same stop (ms). */
export const SAME_STOP_MS = 1000;

export class StopRequest {
  /** Resolves with the reason of the first request to stop. */
  readonly requested: Promise<StopReason>;
  /** Resolves on a request that comes SAME_STOP_MS or more after the first: stop waiting for requests in flight. */
  readonly hurried: Promise<void>;
  #stoppingSince: number | null = null;
  #resolve!: (reason: StopReason) => void;
  #hurry!: () => void;
  readonly #listeners: [Deno.Signal, () => void][] = [];

  /**
   * Listens to SIGTERM and SIGINT (SIGTERM cannot be listened to on Windows: only SIGINT there).
   * `now` is the clock (tests pass their own).
   */
  constructor(private readonly now: () => number = () => performance.now()) {
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
    return this.#stoppingSince !== null;
  }

  /** The first call starts the stop; a later one hurries it, unless it came within SAME_STOP_MS. */
  request(reason: StopReason): void {
    if (this.#stoppingSince === null) {
      this.#stoppingSince = this.now();
      this.#resolve(reason);
    } else if (this.now() - this.#stoppingSince >= SAME_STOP_MS) {
      this.#hurry();
    }
  }

  /** Stops listening to the signals. */
  dispose(): void {
    for (const [signal, listener] of this.#listeners.splice(0)) {
      Deno.removeSignalListener(signal, listener);
    }
  }
}
