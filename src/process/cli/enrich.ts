/**
 * `ipintel enrich [file]`: a CSV/TSV table, an NDJSON stream or a web access
 * log, every record written back in order with the answer for its address
 * added (src/core/enrich/enricher.ts), optionally as the security lists stood
 * when each record was written. Output is written while input is read, one
 * chunk at a time: a slow reader slows the run, memory stays that of a chunk.
 */

import { type Config, type FlagValues, UsageError } from "../../base/config.ts";
import { type FieldSelection, parseFieldSelection } from "../../core/format/select.ts";
import {
  type CutPiece,
  Enricher,
  type EnrichInput,
  EnrichInputError,
  type EnrichOptions,
  type EnrichOutput,
} from "../../core/enrich/enricher.ts";
import { detectInput } from "../../core/enrich/detect.ts";
import { openServed, openSharedData, servedFor } from "../server/served.ts";
import { addCounts, EnrichPool } from "./enrich_pool.ts";
import { partialWords, TIME_FLAGS, timeOptions, travelLine } from "./enrich_times.ts";
import { defineCommand } from "./command.ts";
import { lazyParts, STREAM_CACHE_SIZE, streamConfig } from "./lookup.ts";
import { MAX_RECORD } from "../../core/enrich/csv_records.ts";

const ENRICH_FLAGS = {
  input: {
    type: "string",
    placeholder: "<kind>",
    description: "csv, tsv, ndjson or log (default: from the file name, else from the first line)",
  },
  column: {
    type: "string",
    placeholder: "<name>",
    description: "CSV/TSV: the address column (default ip)",
  },
  prefix: {
    type: "string",
    placeholder: "<text>",
    description: "CSV/TSV: prefix of the added columns (default ip_)",
  },
  field: {
    type: "string",
    placeholder: "<path>",
    description: "NDJSON: the address field, a dotted path such as source.ip (default ip)",
  },
  into: {
    type: "string",
    placeholder: "<key>",
    description: "NDJSON and logs as NDJSON: the key the answer is added under (default ipintel)",
  },
  "time-column": {
    type: "string",
    placeholder: "<name>",
    description:
      "CSV/TSV: answer security and risk as of this column's time (ISO 8601, epoch s/ms/µs)",
  },
  "time-field": {
    type: "string",
    placeholder: "<path>",
    description:
      "NDJSON: answer security and risk as of this field's time (ISO 8601, epoch s/ms/µs)",
  },
  "ua-column": {
    type: "string",
    placeholder: "<name>",
    description: "CSV/TSV: the user-agent column, parsed into userAgent (logs: their own)",
  },
  "ua-field": {
    type: "string",
    placeholder: "<path>",
    description: "NDJSON: the user-agent field, a dotted path, parsed into userAgent",
  },
  "log-time": {
    type: "boolean",
    description: "Logs: answer security and risk as of each line's own [time]",
  },
  at: {
    type: "string",
    placeholder: "<time>",
    description: "Answer security and risk as the lists stood at this time, every record",
  },
  get: {
    type: "string",
    placeholder: "<fields>",
    description: "Comma-separated fields to add, as the API's get (e.g. country,asn_org,security)",
  },
  lang: {
    type: "string",
    placeholder: "<code>",
    description: "Language of place names (e.g. de, fr, ja, pt-BR); default en",
  },
  format: {
    type: "string",
    placeholder: "<format>",
    description: "Logs: ndjson (default), csv or tsv; other inputs keep their own format",
  },
  ...TIME_FLAGS,
} as const;

export const enrichCommand = defineCommand({
  summary: "Add the answer for each record's address to a CSV/TSV, NDJSON stream or access log",
  usage: "[<file> | -]",
  flags: ENRICH_FLAGS,
  positionals: { min: 0, max: 1 },
  details:
    "Reads the file (or standard input) and writes every record once, in order, to standard " +
    "output with the selected fields added (docs/enrich.md). A record without an address, with " +
    "an invalid one, a malformed JSON line or a short row is written with an error field and " +
    "counted; the run goes on. A record longer than 1 MiB (" + MAX_RECORD.toLocaleString("en") +
    " characters: a quote left open) is such a bad record: its first line is written back " +
    "with the error, and reading resumes after it. A record whose time cannot be read, or lies " +
    "outside the list history, keeps the rest of its answer (security and risk empty, the " +
    "reason in its error). An access log's user agent (the combined " +
    "format's last quoted field) fills userAgent; --ua-column and --ua-field name it in " +
    "CSV/TSV and NDJSON. A summary goes to standard error at the end, and a progress " +
    "line while it runs when standard error is a terminal. Exit status 0, or 1 when the input " +
    "itself cannot be read.",
  settings: [
    "dataDir",
    "sourcesFile",
    "cacheSize",
    "workers",
    "cityDb",
    "asnDb",
    "ispDb",
    "anonymousIpDb",
  ],
  settingDefaults: {
    cacheSize: `${STREAM_CACHE_SIZE}`,
    workers: "1 (set: that many, from about 1 MB on)",
  },
  run: ({ config, chosen, flags, positionals }) =>
    runEnrich(config, flags, positionals[0] ?? "-", chosen?.has("workers") ?? false),
});

/**
 * Input chunks (of up to 64 KB) answered here before the workers start: a short input is
 * answered before they would have opened the data, and pays nothing for them.
 *
 * Workers answer only when the user sets their number (--workers, IPINTEL_WORKERS): left to
 * itself enrich answers in this isolate. Each worker fills caches of its own, so workers took
 * 1.26-1.94x the memory of one isolate on every input measured, and were slower on short inputs
 * and on most logs (bench/enrich_defaults.ts, docs/enrich.md).
 */
const POOL_AFTER_CHUNKS = 16;

/** Batches each worker may hold (being answered, or answered and waiting to be written). */
const BATCHES_PER_WORKER = 3;

const INPUTS: readonly EnrichInput[] = ["csv", "tsv", "ndjson", "log"];
const OUTPUTS: readonly EnrichOutput[] = ["ndjson", "csv", "tsv"];

async function runEnrich(
  config: Config,
  flags: FlagValues<typeof ENRICH_FLAGS>,
  path: string,
  workersChosen: boolean,
): Promise<number> {
  const chosen = checkedInput(flags.input);
  const output = checkedOutput(flags.format);
  let selection: FieldSelection | null;
  try {
    selection = parseFieldSelection(flags.get);
  } catch (error) {
    throw new UsageError(`Invalid --get: ${(error as Error).message}`);
  }
  const { at, timeZone, travel } = timeOptions(flags, new Date());
  let file: Deno.FsFile | null = null;
  if (path !== "-") {
    try {
      file = await Deno.open(path);
    } catch (error) {
      console.error(`ipintel enrich: cannot read ${path}: ${(error as Error).message}`);
      return 1;
    }
  }
  // With workers, the data set is verified once, in memory the workers share.
  const streaming = streamConfig(config);
  const shared = workersChosen && config.workers > 1 ? await openSharedData(streaming) : null;
  const { lookup } = shared
    ? servedFor(shared.data, lazyParts())
    : await openServed(streaming, lazyParts());
  // The byte-order mark is kept (the engine writes it back where it was).
  const reader = (file?.readable ?? Deno.stdin.readable)
    .pipeThrough(new TextDecoderStream("utf-8", { ignoreBOM: true }))
    .getReader();
  const out = Deno.stdout.writable.getWriter();
  const encoder = new TextEncoder();
  const progress = Deno.stderr.isTerminal()
    ? (text: string) => Deno.stderr.writeSync(encoder.encode(text))
    : null;
  const started = performance.now();
  let shownAt = started;
  let options: EnrichOptions | null = null;
  let enricher: Enricher | null = null;
  let pool: EnrichPool | null = null;
  const counts = () => addCounts(enricher?.counts ?? addCounts(), ...(pool ? [pool.counts()] : []));
  // Answers in input order: this isolate's own are made at once, the workers' come later.
  const answers: Promise<string>[] = [];
  let writing: Promise<void> = Promise.resolve();
  // A write is awaited before the next one starts, and answers wait (at most a few batches
  // per worker) while one is written: a slow reader slows the run instead of filling memory.
  const writeNext = async () => {
    // Travel is judged here, where answers are taken in input order (the workers' are marked).
    const text = enricher!.fillTravel(await answers.shift()!);
    await writing;
    if (text !== "") {
      writing = out.write(encoder.encode(text));
      writing.catch(() => {}); // its error is thrown where it is awaited
    }
  };
  let chunks = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      options ??= {
        input: chosen ?? detectInput(path, value, flags.column ?? "ip"),
        output,
        column: flags.column,
        field: flags.field,
        time: flags["time-column"] ?? flags["time-field"],
        logTime: flags["log-time"] ?? false,
        userAgent: flags["ua-column"] ?? flags["ua-field"],
        prefix: flags.prefix ?? "ip_",
        into: flags.into ?? "ipintel",
        selection,
        lang: flags.lang ?? null,
        at,
        timeZone,
        travel,
      };
      enricher ??= new Enricher(lookup, options);
      // With workers set, a long input is answered by them from its POOL_AFTER_CHUNKS-th chunk
      // on (past its header); a short one by this isolate alone.
      const position = enricher.position();
      if (shared && pool === null && ++chunks >= POOL_AFTER_CHUNKS && position) {
        pool = new EnrichPool(config.workers, {
          config: streaming,
          handoff: shared.handoff,
          options,
          position,
        });
      }
      if (pool) {
        for (const piece of enricher.cut(value)) answers.push(submitted(pool, piece));
      } else {
        answers.push(Promise.resolve(enricher.push(value)));
      }
      while (answers.length > (pool ? BATCHES_PER_WORKER * config.workers : 0)) await writeNext();
      const now = performance.now();
      if (progress && now - shownAt >= 250) {
        shownAt = now;
        const records = counts().records;
        progress(`\r${records} records, ${rate(records, now - started)}/s`);
      }
    }
    while (answers.length > 0) await writeNext();
    await writing;
    if (enricher) {
      const text = enricher.end();
      if (text !== "") await out.write(encoder.encode(text));
    }
  } catch (error) {
    if (error instanceof Deno.errors.BrokenPipe) return 0; // `| head`: the reader went away
    if (error instanceof EnrichInputError) {
      if (progress) progress("\n");
      console.error(`ipintel enrich: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    pool?.close();
    reader.releaseLock();
    out.releaseLock();
  }
  const ms = performance.now() - started;
  const total = counts();
  const failed = Object.entries(total.failed);
  const failedCount = failed.reduce((sum, [, n]) => sum + n, 0);
  if (progress) progress("\n");
  console.error(
    `ipintel enrich: ${total.records} records, ${total.enriched} enriched${
      partialWords(total)
    }, ${failedCount} failed` +
      (failed.length ? ` (${failed.map(([reason, n]) => `${reason}: ${n}`).join(", ")})` : "") +
      ` in ${(ms / 1000).toFixed(1)} s, ${rate(total.records, ms)} records/s` +
      (pool ? ` with ${config.workers} workers` : ""),
  );
  const travelled = enricher?.travelCounts();
  if (travelled && travel) console.error(travelLine(travelled, travel.speedKmh));
  return 0;
}

/** A cut piece's output: records sent to a worker, or a bad record this isolate wrote. */
function submitted(pool: EnrichPool, piece: CutPiece): Promise<string> {
  if (typeof piece !== "string") return Promise.resolve(piece.written);
  const answer = pool.submit(piece);
  // When a worker fails, every batch waiting fails with it: the first one awaited
  // ends the run, the others are not left as unhandled rejections.
  answer.catch(() => {});
  return answer;
}

function rate(records: number, ms: number): number {
  return ms > 0 ? Math.round(records / (ms / 1000)) : 0;
}

function checkedInput(text: string | undefined): EnrichInput | null {
  if (text === undefined) return null;
  const input = text.trim().toLowerCase() as EnrichInput;
  if (!INPUTS.includes(input)) {
    throw new UsageError(
      `Invalid --input ${JSON.stringify(text)}: expected csv, tsv, ndjson or log`,
    );
  }
  return input;
}

function checkedOutput(text: string | undefined): EnrichOutput {
  if (text === undefined) return "ndjson";
  const output = text.trim().toLowerCase() as EnrichOutput;
  if (!OUTPUTS.includes(output)) {
    throw new UsageError(`Invalid --format ${JSON.stringify(text)}: expected ndjson, csv or tsv`);
  }
  return output;
}
