/** `ipintel lookup <ip>...`: the API's answer for each address, without HTTP. */

import {
  type Config,
  DEFAULT_RECORD_CACHE_SIZE,
  type FlagValues,
  UsageError,
} from "../../base/config.ts";
import { AppError, quoteInput } from "../../base/errors.ts";
import {
  applySelection,
  type FieldSelection,
  type OutputFormat,
  parseFieldSelection,
  renderSuccess,
} from "../../core/format/mod.ts";
import type { Json } from "../../base/types.ts";
import type { StreamFormat } from "../../core/format/incremental.ts";
import { defineCommand } from "./command.ts";
import { lookupStream } from "./lookup_lines.ts";
import { openServed, type SharedParts } from "../server/served.ts";
import { createEnrichment } from "../../core/place/warm.ts";
import { createUserAgentParser } from "../../core/ua/parse.ts";
import { parseAt } from "../../data/history/at.ts";

const LOOKUP_FLAGS = {
  ua: {
    type: "string",
    placeholder: "<string>",
    description: "User-agent string to parse into userAgent",
  },
  lang: {
    type: "string",
    placeholder: "<code>",
    description: "Language of place names (e.g. de, fr, ja, pt-BR); default en",
  },
  get: {
    type: "string",
    placeholder: "<fields>",
    description: "Comma-separated fields to keep, as the API's get (e.g. country,asn_org)",
  },
  format: {
    type: "string",
    placeholder: "<format>",
    description: "json or ndjson (one data object per line, default), xml or csv (one document)",
  },
  at: {
    type: "string",
    placeholder: "<time>",
    description:
      "Answer security (and risk) from the lists as they stood at this ISO 8601 time (docs/history.md)",
  },
} as const;

const FORMATS: readonly StreamFormat[] = ["json", "ndjson", "xml", "csv"];

/**
 * Decoded records `lookup -` keeps per database unless IPINTEL_CACHE_SIZE sets
 * another number: a long run meets many more records than a server's working
 * set, and decoding a record again costs far more than a warm lookup. At most
 * about 100 MB per database (the bytes a cached record takes: docs/design.md,
 * Caching).
 */
export const STREAM_CACHE_SIZE = 500_000;

export const lookupCommand = defineCommand({
  summary: "Print the API's data object for each address",
  usage: "<ip> [<ip> ...] | -",
  flags: LOOKUP_FLAGS,
  positionals: { min: 0, max: Infinity },
  details:
    "An address that is invalid, has no data or meets a corrupt database record is named on " +
    "stderr, the others are still answered, and the exit status is 1.\n\n" +
    "With - (or no address and standard input a pipe or file), addresses are read from " +
    "standard input, one a line, and answered as they are read: ndjson (json) writes each " +
    "item as POST /bulk?format=ndjson does, csv one header then a row each, xml one streamed " +
    "document. A line that fails is answered in place (its error in the item) and the run " +
    "goes on; the exit status is 0 unless a lookup met a corrupt record (1). A progress line " +
    "goes to standard error when it is a terminal.",
  // The data it reads: the data directory, the sources file and the operator's own databases.
  settings: [
    "dataDir",
    "sourcesFile",
    "cacheSize",
    "cityDb",
    "asnDb",
    "ispDb",
    "connectionTypeDb",
    "anonymousIpDb",
    "domainDb",
  ],
  // `lookup -` keeps more records (streamConfig); one address reads too few to matter.
  settingDefaults: { cacheSize: `${STREAM_CACHE_SIZE} (lookup -)` },
  run: ({ config, flags, positionals }) => runLookup(config, flags, positionals),
});

/** Returns 0 when every address was answered, 1 when any failed. */
async function runLookup(
  config: Config,
  flags: FlagValues<typeof LOOKUP_FLAGS>,
  ips: readonly string[],
): Promise<number> {
  const format = readFormat(flags.format);
  let selection: FieldSelection | null;
  try {
    selection = parseFieldSelection(flags.get);
  } catch (error) {
    // Checked before the data is opened: a typo is a usage error, like a bad flag.
    throw new UsageError(`Invalid --get: ${(error as Error).message}`);
  }
  const at = readAt(flags.at);
  if (ips.includes("-") || (ips.length === 0 && stdinIsPiped())) {
    if (ips.length > 1) {
      throw new UsageError("Give addresses as arguments or - for standard input, not both");
    }
    const { lookup: lookup } = await openServed(streamConfig(config), lazyParts());
    return await lookupStream(lookup, {
      format: format === "json" ? "ndjson" : format,
      selection,
      userAgent: flags.ua ?? null,
      lang: flags.lang ?? null,
      at,
    });
  }
  if (ips.length === 0) {
    throw new UsageError(`Missing argument\nUsage: ipintel lookup ${lookupCommand.usage}`);
  }
  const { lookup: lookup } = await openServed(config, lazyParts());
  const answers: Json[] = [];
  let failed = 0;
  for (const ip of ips) {
    try {
      const result = lookup.find(ip, {
        userAgent: flags.ua ?? null,
        lang: flags.lang ?? null,
        selection,
        at,
      });
      const data = applySelection(result, selection);
      // JSON streams one line per address; XML and CSV are one document at the end.
      if (format === "json" || format === "ndjson") console.log(JSON.stringify(data));
      else answers.push(data);
    } catch (error) {
      // A caller's mistake reads as the API says it; anything else (a corrupt record
      // in a database) is named with its address, and the other addresses still run.
      console.error(
        error instanceof AppError
          ? error.message
          : `Lookup of ${quoteInput(ip)} failed: ${(error as Error)?.message ?? String(error)}`,
      );
      failed++;
    }
  }
  if (format !== "json" && answers.length > 0) {
    // One address reads like GET /ip/{ip}, several like /bulk (a responseArray).
    const data = ips.length === 1 ? answers[0]! : { responseArray: answers };
    console.log(renderSuccess(data, format as OutputFormat).body.replace(/\r?\n$/, ""));
  }
  return failed ? 1 : 0;
}

/** The configuration `lookup -` runs with: the larger record cache unless one was set. */
export function streamConfig(config: Config): Config {
  return config.cacheSize === DEFAULT_RECORD_CACHE_SIZE
    ? { ...config, cacheSize: STREAM_CACHE_SIZE }
    : config;
}

/**
 * The enrichment caches filled as countries and zones are met, not all at
 * start as a server fills them: a command meets few (one lookup, one country),
 * and a stream pays for each country once, in the stream.
 */
export function lazyParts(): SharedParts {
  return { enrichment: createEnrichment({ warm: false }), parseUserAgent: createUserAgentParser() };
}

/** `--at`: a malformed time is a usage error, like a bad flag. */
function readAt(text: string | undefined): Date | null {
  try {
    return parseAt(text, "--at");
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Unlike the API, which falls back to JSON, the CLI refuses an unknown format. */
function readFormat(text: string | undefined): StreamFormat {
  if (text === undefined) return "json";
  const format = text.trim().toLowerCase() as StreamFormat;
  if (!FORMATS.includes(format)) {
    throw new UsageError(
      `Invalid --format ${JSON.stringify(text)}: expected json, ndjson, xml or csv`,
    );
  }
  return format;
}

/**
 * Standard input is a pipe, a file or a socket: not a terminal, and not a
 * character device such as /dev/null (a job runner's empty stdin).
 */
export function stdinIsPiped(): boolean {
  if (Deno.stdin.isTerminal()) return false;
  try {
    const info = Deno.statSync("/dev/stdin");
    return info.isFile || info.isFifo === true || info.isSocket === true;
  } catch {
    return true; // no /dev/stdin (Windows): not a terminal is taken as piped
  }
}
