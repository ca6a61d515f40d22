/**
 * Counters for `GET /metrics`, in the Prometheus text format (version 0.0.4).
 *
 * Counting sits on every request, the fast path's included, so it is plain
 * arithmetic on preallocated arrays: no label strings are built per request,
 * only when the text is rendered for a scrape.
 */

import type { Lookup } from "../lookup/lookup.ts";
import type { DataSet } from "../sources/data_set.ts";
import { ROUTES } from "./route.ts";

/** Methods counted under their own name; any other is `OTHER` (bounded label values). */
export const METHODS = ["GET", "POST", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE", "OTHER"];
const OTHER_METHOD = METHODS.length - 1;

/** Upper bounds (seconds) of the latency histogram: the fast path answers in tens of µs. */
export const DURATION_BUCKETS = [
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

export type ReloadResult = "success" | "failure";

/** Hits and misses of a record cache since it was made. */
export interface CacheCounts {
  hits: number;
  misses: number;
}

/** Index of a method in {@link METHODS}. */
export function methodIndex(method: string): number {
  switch (method) {
    case "GET":
      return 0;
    case "POST":
      return 1;
    case "HEAD":
      return 2;
    case "OPTIONS":
      return 3;
    case "PUT":
      return 4;
    case "PATCH":
      return 5;
    case "DELETE":
      return 6;
    default:
      return OTHER_METHOD;
  }
}

export class Metrics {
  /** Request counts by `route × method` cell, then by status. */
  readonly #requests: Map<number, number>[];
  /** Per route: one count per bucket (the last is +Inf), then the sum. */
  readonly #buckets: Float64Array[];
  readonly #sums: Float64Array;
  #lookups = 0;
  #rateLimited = 0;
  readonly #reloads: Record<ReloadResult, number> = { success: 0, failure: 0 };
  /** Cache counts of data sets no longer served (a reload swapped them out), by kind. */
  readonly #retiredCaches = new Map<string, CacheCounts>();
  readonly #dataSet: () => DataSet | null;
  readonly #version: string;

  /** @param dataSet the data set being served now (null while loading). */
  constructor(options: { dataSet: () => DataSet | null; version: string }) {
    this.#dataSet = options.dataSet;
    this.#version = options.version;
    this.#requests = Array.from({ length: ROUTES.length * METHODS.length }, () => new Map());
    this.#buckets = ROUTES.map(() => new Float64Array(DURATION_BUCKETS.length + 1));
    this.#sums = new Float64Array(ROUTES.length);
  }

  /** Counts one answered request: its route (index in ROUTES), method, status and duration. */
  observe(route: number, method: number, status: number, seconds: number): void {
    const cell = this.#requests[route * METHODS.length + method]!;
    cell.set(status, (cell.get(status) ?? 0) + 1);
    const buckets = this.#buckets[route]!;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    buckets[i]!++;
    this.#sums[route]! += seconds;
    if (status === 429) this.#rateLimited++;
  }

  /**
   * The lookup function, counting each address answered with data. (Rarely
   * one is counted twice: when the fast path hands a request it looked up to
   * the app, which looks it up again, for a caller whose rate count must
   * first be read from the KV.)
   */
  countLookups(lookup: Lookup): Lookup {
    return (ip, request) => {
      const result = lookup(ip, request);
      this.#lookups++;
      return result;
    };
  }

  /** Called by whatever reloads the data, once per attempt. */
  recordReload(result: ReloadResult): void {
    this.#reloads[result]++;
  }

  /** Keeps the cache counts of a data set that stops being served, so the totals never go down. */
  retireDataSet(data: DataSet | null): void {
    if (!data) return;
    for (const [kind, counts] of cacheCounts(data)) {
      const retired = this.#retiredCaches.get(kind) ?? { hits: 0, misses: 0 };
      retired.hits += counts.hits;
      retired.misses += counts.misses;
      this.#retiredCaches.set(kind, retired);
    }
  }

  /** The Prometheus text exposition of every metric. */
  render(): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

    family("ipintel_build_info", "gauge", "The running version of ipintel (always 1)");
    out.push(`ipintel_build_info{version="${escapeLabel(this.#version)}"} 1`);

    family(
      "ipintel_http_requests_total",
      "counter",
      "HTTP requests answered, by method, route pattern and status",
    );
    for (let r = 0; r < ROUTES.length; r++) {
      for (let m = 0; m < METHODS.length; m++) {
        const cell = this.#requests[r * METHODS.length + m]!;
        for (const status of [...cell.keys()].sort((a, b) => a - b)) {
          out.push(
            `ipintel_http_requests_total{method="${METHODS[m]}",route="${
              ROUTES[r]
            }",status="${status}"} ${cell.get(status)}`,
          );
        }
      }
    }

    family(
      "ipintel_http_request_duration_seconds",
      "histogram",
      "Time from receiving a request to having its response, by route pattern",
    );
    for (let r = 0; r < ROUTES.length; r++) {
      const buckets = this.#buckets[r]!;
      let count = 0;
      for (let i = 0; i < buckets.length; i++) count += buckets[i]!;
      if (count === 0) continue;
      const route = `route="${ROUTES[r]}"`;
      let cumulative = 0;
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        cumulative += buckets[i]!;
        out.push(
          `ipintel_http_request_duration_seconds_bucket{${route},le="${
            DURATION_BUCKETS[i]
          }"} ${cumulative}`,
        );
      }
      out.push(
        `ipintel_http_request_duration_seconds_bucket{${route},le="+Inf"} ${count}`,
        `ipintel_http_request_duration_seconds_sum{${route}} ${this.#sums[r]}`,
        `ipintel_http_request_duration_seconds_count{${route}} ${count}`,
      );
    }

    family(
      "ipintel_lookups_total",
      "counter",
      "Addresses answered with data (each bulk item counts)",
    );
    out.push(`ipintel_lookups_total ${this.#lookups}`);

    family("ipintel_rate_limited_total", "counter", "Requests refused with 429 (rate limit)");
    out.push(`ipintel_rate_limited_total ${this.#rateLimited}`);

    family("ipintel_data_reloads_total", "counter", "Data reload attempts, by result");
    for (const result of ["success", "failure"] as const) {
      out.push(`ipintel_data_reloads_total{result="${result}"} ${this.#reloads[result]}`);
    }

    const data = this.#dataSet();
    family(
      "ipintel_data_build_timestamp_seconds",
      "gauge",
      "When each installed data file was built (manifest.json), in seconds since the epoch",
    );
    for (const entry of data?.manifest.sources ?? []) {
      const built = Date.parse(entry.built);
      if (Number.isFinite(built)) {
        out.push(
          `ipintel_data_build_timestamp_seconds{kind="${escapeLabel(entry.kind)}"} ${built / 1000}`,
        );
      }
    }

    const caches = new Map<string, CacheCounts>();
    for (const [kind, counts] of this.#retiredCaches) caches.set(kind, { ...counts });
    for (const [kind, counts] of data ? cacheCounts(data) : []) {
      const total = caches.get(kind) ?? { hits: 0, misses: 0 };
      caches.set(kind, { hits: total.hits + counts.hits, misses: total.misses + counts.misses });
    }
    for (const what of ["hits", "misses"] as const) {
      const name = `ipintel_cache_${what}_total`;
      family(name, "counter", `Decoded-record cache ${what}, by database`);
      for (const [kind, counts] of caches) {
        out.push(`${name}{cache="${escapeLabel(kind)}"} ${counts[what]}`);
      }
    }
    return out.join("\n") + "\n";
  }
}

/** The record-cache counts of each database a data set holds. */
function cacheCounts(data: DataSet): [string, CacheCounts][] {
  const found: [string, CacheCounts][] = [];
  if (data.city) found.push(["city", data.city.cacheCounts()]);
  if (data.asn) found.push(["asn", data.asn.cacheCounts()]);
  return found;
}

/** A label value as the text format wants it: backslash, quote and newline escaped. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);
}

/** The content type of the text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
