/** Messages between `ipintel serve`'s main isolate and its request-serving workers. */

import type { Config } from "../../base/config.ts";
import type { Handoff } from "./served.ts";

/** From the main isolate to a worker. */
export type ToWorker =
  | {
    type: "start";
    config: Config;
    /** The worker's slice of the shared metrics counts. */
    slice: number;
    counts: SharedArrayBuffer;
    /** The server's rate table (src/service/keys_limits/rate_table.ts): every isolate counts in it. */
    rateTable: SharedArrayBuffer;
    /** The forward-auth decision counts (src/service/policy/counter.ts) and how many isolates share them. */
    policyCounts?: { buffer: SharedArrayBuffer; isolates: number };
    /** The port to share: the one the main isolate listens on. */
    port: number;
  }
  /**
   * A verified data set to serve (the first, or a reload), in two steps: the
   * worker opens it ("prepared"), and switches to it on "commit" only once
   * every worker could open it ("discard" otherwise): all switch or none.
   */
  | { type: "data"; handoff: Handoff }
  | { type: "commit" }
  | { type: "discard" }
  | { type: "stop"; timeoutMs: number }
  /** A second signal: stop waiting for requests in flight. */
  | { type: "hurry" };

/** From a worker to the main isolate. */
export type FromWorker =
  | { type: "listening"; port: number }
  /** A data set handed over is opened, ready to switch to, or (error) could not be. */
  | { type: "prepared"; error: string | null }
  /** The committed data set is served now. */
  | { type: "installed" }
  /** Access log text (whole lines), written by the main isolate so lines never interleave. */
  | { type: "log"; text: string }
  /** The stop began: requests then in flight. */
  | { type: "stopping"; inFlight: number }
  | { type: "stopped"; drained: boolean };
