/** `ipintel lookup <ip>...`: the API's answer for each address, without HTTP. */

import { type Config, type FlagValues, UsageError } from "../config.ts";
import { AppError, quoteInput } from "../errors.ts";
import {
  applySelection,
  type FieldSelection,
  type OutputFormat,
  parseFieldSelection,
  renderSuccess,
} from "../format/mod.ts";
import type { Json } from "../types.ts";
import { defineCommand } from "./command.ts";
import { createServices } from "./services.ts";

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
    description: "json (one data object per line, default), xml or csv (one document)",
  },
} as const;

const FORMATS: readonly OutputFormat[] = ["json", "xml", "csv"];

export const lookupCommand = defineCommand({
  summary: "Print the API's data object for each address",
  usage: "<ip> [<ip> ...]",
  flags: LOOKUP_FLAGS,
  positionals: { min: 1, max: Infinity },
  details:
    "An address that is invalid, has no data or meets a corrupt database record is named on " +
    "stderr, the others are still answered, and the exit status is 1.",
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
  const { lookup } = await createServices(config);
  const answers: Json[] = [];
  let failed = 0;
  for (const ip of ips) {
    try {
      const result = lookup(ip, {
        userAgent: flags.ua ?? null,
        lang: flags.lang ?? null,
        selection,
      });
      const data = applySelection(result, selection);
      // JSON streams one line per address; XML and CSV are one document at the end.
      if (format === "json") console.log(JSON.stringify(data));
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
    console.log(renderSuccess(data, format).body.replace(/\r?\n$/, ""));
  }
  return failed ? 1 : 0;
}

/** Unlike the API, which falls back to JSON, the CLI refuses an unknown format. */
function readFormat(text: string | undefined): OutputFormat {
  if (text === undefined) return "json";
  const format = text.trim().toLowerCase() as OutputFormat;
  if (!FORMATS.includes(format)) {
    throw new UsageError(`Invalid --format ${JSON.stringify(text)}: expected json, xml or csv`);
  }
  return format;
}
