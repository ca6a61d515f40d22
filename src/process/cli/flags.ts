/**
 * The strict command-line parser every command uses: its own flags, `--help`,
 * `--version` and every configuration flag of config.ts's OPTIONS.
 */

import { parseArgs } from "node:util";
import {
  type Config,
  type FlagTable,
  type FlagValues,
  loadConfig,
  OPTIONS,
  UsageError,
} from "../../base/config.ts";
import { FILE_CHECKS } from "../server/data_dir.ts";

/** What a command receives: the validated configuration, its own flags and its positionals. */
export interface CommandLine<F extends FlagTable> {
  config: Config;
  /** The settings the user set (by flag or environment variable), not left to their defaults. */
  chosen?: ReadonlySet<keyof Config>;
  flags: FlagValues<F>;
  positionals: string[];
}

/** `--help` and `--version`, accepted by every command. */
export const COMMON_FLAGS = {
  help: { type: "boolean", short: "h", description: "Print this help and exit" },
  version: { type: "boolean", short: "V", description: "Print the version and exit" },
} as const satisfies FlagTable;

/**
 * Parses one command's arguments strictly with `node:util` `parseArgs`: the
 * command's own flags, `--help`, `--version` and every configuration flag
 * (`--port`, `--data-dir`, ...). An unknown flag, a missing value or a value
 * given to a boolean flag throws a UsageError naming it. Configuration values
 * are validated only when `withConfig` is true (skipped for `--help`).
 *
 * @example parseFlags(["--port", "9000", "x"], { force: { type: "boolean", description: "" } })
 */
export function parseFlags<F extends FlagTable>(
  args: readonly string[],
  own: F,
): {
  flags: FlagValues<F> & FlagValues<typeof COMMON_FLAGS>;
  config: Record<string, string>;
  positionals: string[];
} {
  // The command's own flags first: the "valid options" of an error list them first.
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, spec] of Object.entries({ ...own, ...COMMON_FLAGS })) {
    options[name] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type };
  }
  for (const spec of OPTIONS) options[spec.flag] ??= { type: "string" };
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw usageError(error as Error & { code?: string }, options);
  }
  const config: Record<string, string> = {};
  const flags: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parsed.values)) {
    if (OPTIONS.some((o) => o.flag === name)) config[name] = value as string;
    else flags[name] = value;
  }
  return { flags: flags as FlagValues<F>, config, positionals: parsed.positionals };
}

/** Rewords parseArgs' errors to name the flag the way the rest of the CLI does. */
function usageError(
  error: Error & { code?: string },
  options: Record<string, { type: string; short?: string }>,
): Error {
  const flag = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1] ?? "";
  const valid = Object.keys(options).map((name) => `--${name}`).join(", ");
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return new UsageError(`Unknown option ${flag}: valid options are ${valid}`);
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return new UsageError(
        /does not take/.test(error.message)
          ? `Option ${flag} takes no value`
          : `Option ${flag} needs a value (write ${flag}=<value> for a value starting with -)`,
      );
    default:
      return new UsageError(error.message);
  }
}

/**
 * The configuration of a command: the environment and the configuration
 * flags, validated, with the data directory checked on disk.
 */
export function commandConfig(
  env: Record<string, string | undefined>,
  flags: Readonly<Record<string, string | undefined>>,
): Config {
  return loadConfig(env, flags, FILE_CHECKS);
}
