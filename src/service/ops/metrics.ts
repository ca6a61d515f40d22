/**
 * Counters for `GET /metrics`, in the Prometheus text format (version 0.0.4,
 * METRICS_CONTENT_TYPE in src/core/format/render.ts).
 *
 * Counting sits on every request (the app's outermost answer rule), so it is plain
 * arithmetic on preallocated arrays: no label strings are built per request,
 * only when the text is rendered for a scrape.
 */

import { Lookup, type LookupDetail, type LookupOptions } from "../../core/lookup/lookup.ts";
import type { FailedItem, LookupResult } from "../../base/types.ts";
import type { DataSet } from "../../data/sources/data_set.ts";

/** Methods counted under their own name; any other is `OTHER` (bounded label values). */
export const METHODS = ["GET", "POST", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE", "OTHER"];
const OTHER_METHOD = METHODS.length - 1;

/** Upper bounds (seconds) of the latency histogram: a lookup is answered in tens of µs. */
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

/** Status codes counted one by one (100–599); anything else counts as 599. */
const FIRST_STATUS = 100;
const STATUS_SLOTS = 500;
/** Databases whose record caches are counted, in slot order. */
const CACHE_KINDS = ["city", "asn"] as const;

/** Most route labels counted (the app's routes and `unmatched`): the slices have a fixed size. */
export const MAX_ROUTE_LABELS = 32;

// Where each counter sits in one isolate's slice of the counts (Float64Array offsets).
const REQUESTS = 0;
const BUCKETS = REQUESTS + MAX_ROUTE_LABELS * METHODS.length * STATUS_SLOTS;
const BUCKET_COUNT = DURATION_BUCKETS.length + 1; // the last is +Inf
const SUMS = BUCKETS + MAX_ROUTE_LABELS * BUCKET_COUNT;
const LOOKUPS = SUMS + MAX_ROUTE_LABELS;
const RATE_LIMITED = LOOKUPS + 1;
const RELOADS = RATE_LIMITED + 1; // success, failure
const CACHES = RELOADS + 2; // hits, misses per CACHE_KINDS entry
const LOG_DROPPED = CACHES + CACHE_KINDS.length * 2;
const UNCAUGHT = LOG_DROPPED + 1;
const ANSWER_CACHE = UNCAUGHT + 1; // hits, misses, bytes held
/** Counts per isolate (about 0.5 MB). */
const SLICE_LENGTH = ANSWER_CACHE + 3;

/**
 * Counts shared by the isolates of one server (the workers and the process
 * that runs them): each owns one slice and only ever writes its own, so no
 * count is lost without atomics; a scrape sums every slice.
 */
export interface SharedCounts {
  buffer: SharedArrayBuffer;
  /** The slice this isolate writes. */
  slice: number;
}

/** Room for the counts of `isolates` isolates. */
export function sharedCountsBuffer(isolates: number): SharedArrayBuffer {
  return new SharedArrayBuffer(isolates * SLICE_LENGTH * Float64Array.BYTES_PER_ELEMENT);
}

export class Metrics {
  /** Every isolate's counts (one slice each); this isolate writes `#own` only. */
  readonly #all: Float64Array;
  readonly #own: Float64Array;
  /** Cache hits and misses (per CACHE_KINDS entry) of data sets no longer served here. */
  readonly #retiredCaches = new Float64Array(CACHE_KINDS.length * 2);
  readonly #dataSet: () => DataSet | null;
  readonly #version: string;
  readonly #routes: readonly string[];

  /**
   * @param dataSet the data set being served now (null while loading).
   * @param routes the route labels, in the order of their indexes (routeLabels of the app's routes).
   * @param shared counts shared with other isolates (absent: this isolate's own).
   */
  constructor(
    options: {
      dataSet: () => DataSet | null;
      version: string;
      routes: readonly string[];
      shared?: SharedCounts;
    },
  ) {
    this.#dataSet = options.dataSet;
    this.#version = options.version;
    if (options.routes.length > MAX_ROUTE_LABELS) {
      throw new RangeError(`${options.routes.length} route labels: at most ${MAX_ROUTE_LABELS}`);
    }
    this.#routes = options.routes;
    const shared = options.shared;
    this.#all = shared ? new Float64Array(shared.buffer) : new Float64Array(SLICE_LENGTH);
    const slice = shared?.slice ?? 0;
    if (!Number.isInteger(slice) || slice < 0 || (slice + 1) * SLICE_LENGTH > this.#all.length) {
      throw new RangeError(`No metrics slice ${slice} in the shared counts`);
    }
    this.#own = this.#all.subarray(slice * SLICE_LENGTH, (slice + 1) * SLICE_LENGTH);
  }

  /** Counts one answered request: its route (index of its label), method, status and duration. */
  observe(route: number, method: number, status: number, seconds: number): void {
    const own = this.#own;
    const statusSlot = status >= FIRST_STATUS && status < FIRST_STATUS + STATUS_SLOTS
      ? status - FIRST_STATUS
      : STATUS_SLOTS - 1;
    own[REQUESTS + (route * METHODS.length + method) * STATUS_SLOTS + statusSlot]!++;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    own[BUCKETS + route * BUCKET_COUNT + i]!++;
    own[SUMS + route]! += seconds;
    if (status === 429) own[RATE_LIMITED]!++;
  }

  /** The lookup, counting each address answered with data (CountedLookup); every other capability kept as is. */
  countLookups(lookup: Lookup): Lookup {
    return new CountedLookup(lookup, this.#own);
  }

  /** Called by whatever reloads the data, once per attempt. */
  recordReload(result: ReloadResult): void {
    this.#own[RELOADS + (result === "success" ? 0 : 1)]!++;
  }

  /** Log lines dropped (access log, error details): the pipe was closed, failing or too slow. */
  recordLogDropped(lines: number): void {
    this.#own[LOG_DROPPED]! += lines;
  }

  /** An unhandled rejection or uncaught error, logged instead of ending the process. */
  recordUncaughtError(): void {
    this.#own[UNCAUGHT]!++;
  }

  /**
   * Where this isolate's answer cache (src/service/app/answer_cache.ts) reports.
   * A hit answers an address with data as a lookup does, and is counted as one.
   */
  answerCacheSink(): { hit(): void; miss(): void; bytes(total: number): void } {
    const own = this.#own;
    return {
      hit: () => {
        own[ANSWER_CACHE]!++;
        own[LOOKUPS]!++;
      },
      miss: () => void own[ANSWER_CACHE + 1]!++,
      bytes: (total) => void (own[ANSWER_CACHE + 2] = total),
    };
  }

  /** Keeps the cache counts of a data set that stops being served, so the totals never go down. */
  retireDataSet(data: DataSet | null): void {
    if (!data) return;
    CACHE_KINDS.forEach((kind, i) => {
      const counts = cacheCountsOf(data, kind);
      this.#retiredCaches[2 * i]! += counts.hits;
      this.#retiredCaches[2 * i + 1]! += counts.misses;
    });
    this.publishCacheCounts();
  }

  /**
   * Writes this isolate's cache counts into its slice (caches count on their
   * own, outside the slice). A scrape does it for the isolate it lands on;
   * workers also do it every second, so the others' are at most that old.
   */
  publishCacheCounts(): void {
    const data = this.#dataSet();
    CACHE_KINDS.forEach((kind, i) => {
      const counts = cacheCountsOf(data, kind);
      this.#own[CACHES + 2 * i] = this.#retiredCaches[2 * i]! + counts.hits;
      this.#own[CACHES + 2 * i + 1] = this.#retiredCaches[2 * i + 1]! + counts.misses;
    });
  }

  /** Every isolate's counts added up. */
  #totals(): Float64Array {
    this.publishCacheCounts();
    const totals = new Float64Array(SLICE_LENGTH);
    for (let start = 0; start < this.#all.length; start += SLICE_LENGTH) {
      for (let i = 0; i < SLICE_LENGTH; i++) totals[i]! += this.#all[start + i]!;
    }
    return totals;
  }

  /** The Prometheus text exposition of every metric. */
  render(): string {
    const totals = this.#totals();
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
    const routes = this.#routes;
    for (let r = 0; r < routes.length; r++) {
      for (let m = 0; m < METHODS.length; m++) {
        const cell = REQUESTS + (r * METHODS.length + m) * STATUS_SLOTS;
        for (let slot = 0; slot < STATUS_SLOTS; slot++) {
          const count = totals[cell + slot]!;
          if (count === 0) continue;
          out.push(
            `ipintel_http_requests_total{method="${METHODS[m]}",route="${routes[r]}",status="${
              FIRST_STATUS + slot
            }"} ${count}`,
          );
        }
      }
    }

    family(
      "ipintel_http_request_duration_seconds",
      "histogram",
      "Time from receiving a request to having its response, by route pattern",
    );
    for (let r = 0; r < routes.length; r++) {
      const buckets = totals.subarray(BUCKETS + r * BUCKET_COUNT, BUCKETS + (r + 1) * BUCKET_COUNT);
      let count = 0;
      for (let i = 0; i < buckets.length; i++) count += buckets[i]!;
      if (count === 0) continue;
      const route = `route="${routes[r]}"`;
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
        `ipintel_http_request_duration_seconds_sum{${route}} ${totals[SUMS + r]}`,
        `ipintel_http_request_duration_seconds_count{${route}} ${count}`,
      );
    }

    family(
      "ipintel_lookups_total",
      "counter",
      "Addresses answered with data (each bulk item counts)",
    );
    out.push(`ipintel_lookups_total ${totals[LOOKUPS]}`);

    family("ipintel_rate_limited_total", "counter", "Requests refused with 429 (rate limit)");
    out.push(`ipintel_rate_limited_total ${totals[RATE_LIMITED]}`);

    family("ipintel_data_reloads_total", "counter", "Data reload attempts, by result");
    (["success", "failure"] as const).forEach((result, i) => {
      out.push(`ipintel_data_reloads_total{result="${result}"} ${totals[RELOADS + i]}`);
    });

    family(
      "ipintel_log_lines_dropped_total",
      "counter",
      "Log lines not written (access log on stdout, error details on stderr): pipe closed, failing or too slow",
    );
    out.push(`ipintel_log_lines_dropped_total ${totals[LOG_DROPPED]}`);

    family(
      "ipintel_uncaught_errors_total",
      "counter",
      "Unhandled rejections and uncaught errors, logged instead of ending the process",
    );
    out.push(`ipintel_uncaught_errors_total ${totals[UNCAUGHT]}`);

    family(
      "ipintel_answer_cache_hits_total",
      "counter",
      "Lookups answered from the cache of rendered answers (IPINTEL_ANSWER_CACHE)",
    );
    out.push(`ipintel_answer_cache_hits_total ${totals[ANSWER_CACHE]}`);
    family(
      "ipintel_answer_cache_misses_total",
      "counter",
      "Cacheable lookups whose answer was made (and kept)",
    );
    out.push(`ipintel_answer_cache_misses_total ${totals[ANSWER_CACHE + 1]}`);
    family(
      "ipintel_answer_cache_bytes",
      "gauge",
      "Bytes the cached answers and their keys take, every process of the server together",
    );
    out.push(`ipintel_answer_cache_bytes ${totals[ANSWER_CACHE + 2]}`);

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

    family(
      "ipintel_source_data_timestamp_seconds",
      "gauge",
      "The date of each installed source's data (its publisher's date, not the build time), in seconds since the epoch",
    );
    for (const source of data?.installed ?? []) {
      const date = Date.parse(source.dataDate ?? "");
      if (Number.isFinite(date)) {
        out.push(
          `ipintel_source_data_timestamp_seconds{${sourceLabels(source)}} ${date / 1000}`,
        );
      }
    }
    family(
      "ipintel_source_present",
      "gauge",
      "Whether each configured source is installed (1) or absent (0)",
    );
    for (const source of data?.installed ?? []) {
      out.push(`ipintel_source_present{${sourceLabels(source)}} 1`);
    }
    for (const source of data?.absent ?? []) {
      out.push(`ipintel_source_present{${sourceLabels(source)}} 0`);
    }

    for (const [what, offset] of [["hits", 0], ["misses", 1]] as const) {
      const name = `ipintel_cache_${what}_total`;
      family(name, "counter", `Decoded-record cache ${what}, by database`);
      CACHE_KINDS.forEach((kind, i) => {
        out.push(`${name}{cache="${kind}"} ${totals[CACHES + 2 * i + offset]}`);
      });
    }
    return out.join("\n") + "\n";
  }
}

/** Hits and misses of one database's record cache in a data set (zero without it). */
function cacheCountsOf(data: DataSet | null, kind: typeof CACHE_KINDS[number]): CacheCounts {
  return data?.[kind]?.cacheCounts() ?? { hits: 0, misses: 0 };
}

function sourceLabels(source: { name: string; kind: string }): string {
  return `source="${escapeLabel(source.name)}",kind="${escapeLabel(source.kind)}"`;
}

/** A label value as the text format wants it: backslash, quote and newline escaped. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);
}

/**
 * A lookup that counts each address answered with data into `counts` (this
 * isolate's slice of the metrics): it answers with the lookup it wraps (its
 * caches, its scans, whatever it overrides) and counts each answer.
 */
class CountedLookup extends Lookup {
  readonly #lookup: Lookup;
  readonly #counts: Float64Array;

  constructor(lookup: Lookup, counts: Float64Array) {
    super(lookup);
    this.#lookup = lookup;
    this.#counts = counts;
  }

  override find(ipText: string, options?: LookupOptions): LookupResult {
    const result = this.#lookup.find(ipText, options);
    this.#counts[LOOKUPS]!++;
    return result;
  }

  override detail(ipText: string, options?: LookupOptions): LookupDetail {
    const detail = this.#lookup.detail(ipText, options);
    this.#counts[LOOKUPS]!++;
    return detail;
  }

  override item(ipText: string, options?: LookupOptions): LookupResult | FailedItem {
    const answer = this.#lookup.item(ipText, options);
    if (!("error" in answer)) this.#counts[LOOKUPS]!++;
    return answer;
  }

  override withoutCacheFills<T>(scan: () => T): T {
    return this.#lookup.withoutCacheFills(scan);
  }
}
