/** `ipintel asn <n>`: the `/asn/{n}` answer, without HTTP. */

import { type Config, type FlagValues, UsageError } from "../../base/config.ts";
import { parseAsnSelection } from "../../core/asn/layout.ts";
import { createAsnView } from "../../core/asn/view.ts";
import { AppError } from "../../base/errors.ts";
import type { FieldSelection, OutputFormat } from "../../core/format/mod.ts";
import { openServedData } from "../server/served.ts";
import { defineCommand } from "./command.ts";

const ASN_FLAGS = {
  get: {
    type: "string",
    placeholder: "<fields>",
    description: "Comma-separated fields to keep, as the API's get (e.g. name,counts)",
  },
  format: {
    type: "string",
    placeholder: "<format>",
    description: "json (the data object, default), xml or csv (one row per prefix)",
  },
} as const;

const FORMATS: readonly OutputFormat[] = ["json", "xml", "csv"];

export const asnCommand = defineCommand({
  summary: "Print an AS's name, prefixes, counts and list shares (as GET /asn/{n})",
  usage: "<n>",
  flags: ASN_FLAGS,
  positionals: { min: 1, max: 1 },
  details: "The AS number as 15169 or AS15169. An unknown, private or malformed number is " +
    "named on stderr and the exit status is 1.",
  run: ({ config, flags, positionals }) => runAsn(config, flags, positionals[0]!),
});

async function runAsn(
  config: Config,
  flags: FlagValues<typeof ASN_FLAGS>,
  raw: string,
): Promise<number> {
  const format = (flags.format ?? "json").trim().toLowerCase() as OutputFormat;
  if (!FORMATS.includes(format)) {
    throw new UsageError(
      `Invalid --format ${JSON.stringify(flags.format)}: expected json, xml or csv`,
    );
  }
  let selection: FieldSelection | null;
  try {
    selection = parseAsnSelection(flags.get);
  } catch (error) {
    throw new UsageError(`Invalid --get: ${(error as Error).message}`);
  }
  const data = await openServedData(config);
  try {
    const body = (await createAsnView().answer(raw, data, selection, format)).body;
    // JSON prints the data object, as `ipintel lookup` does; XML and CSV the API's document.
    const text = format === "json" ? JSON.stringify(JSON.parse(body).data) : body;
    console.log(text.replace(/\r?\n$/, ""));
    return 0;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    console.error(error.message);
    return 1;
  }
}
