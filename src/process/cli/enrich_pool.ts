/**
 * The workers of `ipintel enrich` (IPINTEL_WORKERS, one per CPU by default):
 * each answers batches of whole records (enrich_worker.ts) over the data set
 * the main isolate read and verified once and shares with them, while the
 * main isolate reads the input, cuts it into batches and writes the answers
 * back in input order. This module does not load the engine: the workers do.
 */

import type { Config } from "../../base/config.ts";
import type { EnrichCounts, EnrichOptions, EnrichPosition } from "../../core/enrich/enricher.ts";
import type { Handoff } from "../server/served.ts";

export type ToEnrichWorker =
  | {
    type: "start";
    config: Config;
    handoff: Handoff;
    options: EnrichOptions;
    position: EnrichPosition;
  }
  | { type: "batch"; id: number; text: string };

export type FromEnrichWorker =
  /** A batch answered, and the worker's counts so far. */
  | { type: "done"; id: number; text: string; counts: EnrichCounts }
  | { type: "failed"; message: string };

interface Member {
  worker: Worker;
  /** Batches sent and not yet answered. */
  busy: number;
  /** What it has counted so far. */
  counts: EnrichCounts;
}

export class EnrichPool {
  readonly #members: Member[] = [];
  readonly #waiting = new Map<
    number,
    { resolve: (text: string) => void; reject: (error: Error) => void }
  >();
  #nextId = 0;
  #failure: Error | null = null;

  /**
   * Starts `count` workers on the shared data set. They open it in some moments; batches
   * sent meanwhile wait for it.
   */
  constructor(count: number, start: Omit<Extract<ToEnrichWorker, { type: "start" }>, "type">) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(new URL("./enrich_worker.ts", import.meta.url).href, {
        type: "module",
        name: `ipintel-enrich-${i}`,
      });
      const member: Member = {
        worker,
        busy: 0,
        counts: { records: 0, enriched: 0, partial: {}, failed: {} },
      };
      worker.onmessage = (event: MessageEvent<FromEnrichWorker>) => {
        const message = event.data;
        if (message.type === "failed") this.#fail(new Error(message.message));
        else {
          member.busy--;
          member.counts = message.counts;
          const waiting = this.#waiting.get(message.id);
          this.#waiting.delete(message.id);
          waiting?.resolve(message.text);
        }
      };
      worker.onerror = (event) => {
        event.preventDefault();
        this.#fail(new Error(`an enrich worker failed: ${event.message}`));
      };
      worker.postMessage({ type: "start", ...start } satisfies ToEnrichWorker);
      this.#members.push(member);
    }
  }

  /** The output of the whole records `text` holds, answered by the least busy worker. */
  submit(text: string): Promise<string> {
    if (this.#failure) return Promise.reject(this.#failure);
    let chosen = this.#members[0]!;
    for (const member of this.#members) if (member.busy < chosen.busy) chosen = member;
    const id = this.#nextId++;
    const { promise, resolve, reject } = Promise.withResolvers<string>();
    this.#waiting.set(id, { resolve, reject });
    chosen.busy++;
    chosen.worker.postMessage({ type: "batch", id, text } satisfies ToEnrichWorker);
    return promise;
  }

  /** What the workers have counted so far, together. */
  counts(): EnrichCounts {
    return addCounts(...this.#members.map((m) => m.counts));
  }

  close(): void {
    for (const member of this.#members) member.worker.terminate();
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#waiting.values()) waiting.reject(this.#failure);
    this.#waiting.clear();
  }
}

/** Counts of parts of one run, added. */
export function addCounts(...parts: EnrichCounts[]): EnrichCounts {
  const total: EnrichCounts = { records: 0, enriched: 0, partial: {}, failed: {} };
  for (const part of parts) {
    total.records += part.records;
    total.enriched += part.enriched;
    for (const [reason, n] of Object.entries(part.partial)) {
      total.partial[reason] = (total.partial[reason] ?? 0) + n;
    }
    for (const [reason, n] of Object.entries(part.failed)) {
      total.failed[reason] = (total.failed[reason] ?? 0) + n;
    }
  }
  return total;
}
