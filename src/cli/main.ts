/** The command line: `serve` (default), `data`, `lookup`; owns exit codes. */

import { type Config, loadConfig, OPTIONS } from "../config.ts";
import { runData } from "./data.ts";
import { runLookup } from "./lookup.ts";
import { runServe } from "./serve.ts";

const COMMANDS: Record<string, (config: Config, args: string[]) => Promise<number>> = {
  serve: runServe,
  data: runData,
  lookup: runLookup,
};

/** Runs one command; returns the process exit status. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const [command = "serve", ...rest] = args;
  if (command === "--help" || command === "-h" || command === "help") {
    console.log(helpText());
    return 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    console.error(`Unknown command "${command}"\n\n${helpText()}`);
    return 2;
  }
  try {
    const { config, rest: remaining } = loadConfig(env, rest);
    return await run(config, remaining);
  } catch (error) {
    console.error(`ipintel ${command}: ${error instanceof Error ? error.message : error}`);
    return 1;
  }
}

/** The `--help` text, built from the option table so it never drifts. */
export function helpText(): string {
  const options = OPTIONS.map((o) =>
    `  --${o.flag.padEnd(16)} ${o.env.padEnd(24)} ${o.description}`
  );
  return [
    "ipintel: self-hosted IP intelligence (geolocation, network, time zone, user agent)",
    "",
    "Usage: deno task ipintel <command> [options]",
    "",
    "Commands:",
    "  serve                      Serve the HTTP API (builds the default data on first run)",
    "  data [--force]             Download and build the default data into the data directory",
    "  data update [--sources F]  Update every source of the sources file (security feeds included)",
    "  lookup <ip> [<ip> ...]     Print the API's data object for each address, one JSON per line",
    "         [--ua <string>]     User-agent string to parse into userAgent",
    "         [--lang <code>]     Language of place names (e.g. de, fr, ja, pt-BR); default en",
    "",
    "Options (flag, environment variable, meaning):",
    ...options,
  ].join("\n");
}
