/** A worker isolate counting decisions into the shared buffer it is sent (counter_test.ts). */
/// <reference lib="deno.worker" />

import { DecisionCounter } from "../../../src/service/policy/counter.ts";

type Job = {
  buffer: SharedArrayBuffer;
  isolates: number;
  slice: number;
  decisions: [string, "allow" | "deny" | "report"][];
};

self.onmessage = (event: MessageEvent<Job>) => {
  const { buffer, isolates, slice, decisions } = event.data;
  const counter = new DecisionCounter({ buffer, isolates, slice });
  for (const [rule, verdict] of decisions) counter.count({ rule, verdict });
  self.postMessage("done");
};
