/**
 * A worker of `ipintel enrich` (enrich_pool.ts): opens the data set the main
 * isolate verified (from its handoff, reading no file), then answers each
 * batch of whole records it is sent, as the main isolate's engine would, from
 * the position past the header that engine reached.
 */

/// <reference lib="deno.worker" />

import { Enricher } from "../../core/enrich/enricher.ts";
import { openServedData, servedFor } from "../server/served.ts";
import type { FromEnrichWorker, ToEnrichWorker } from "./enrich_pool.ts";
import { lazyParts } from "./lookup.ts";

const post = (message: FromEnrichWorker) => self.postMessage(message);
const failed = (error: unknown) =>
  post({ type: "failed", message: error instanceof Error ? error.message : String(error) });

/** The engine, once the data set is open; batches sent meanwhile wait for it, in order. */
let engine: Promise<Enricher> | null = null;

self.onmessage = async (event: MessageEvent<ToEnrichWorker>) => {
  const message = event.data;
  try {
    if (message.type === "start") {
      const { config, handoff, options, position } = message;
      engine = openServedData(config, { handoff }).then((data) =>
        new Enricher(servedFor(data, lazyParts()).lookup, options, position)
      );
      await engine;
      return;
    }
    const enricher = await engine!;
    // The batch holds whole records; `end` makes sure nothing is carried over to the next one.
    const text = enricher.push(message.text) + enricher.end();
    post({ type: "done", id: message.id, text, counts: enricher.counts });
  } catch (error) {
    failed(error);
  }
};
