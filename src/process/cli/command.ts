/**
 * Commands as data: each declares its flags, positionals and help, and one
 * dispatcher parses them strictly (flags.ts) and owns the exit status.
 *
 * Exit status: 0 done, 1 the command failed, 2 a usage or configuration error.
 */

import {
  type AnyOptionSpec,
  type Config,
  ConfigError,
  defaultText,
  type FlagTable,
  OPTIONS,
  UsageError,
  VERSION,
} from "../../base/config.ts";
import { commandConfig, type CommandLine, COMMON_FLAGS, parseFlags } from "./flags.ts";

/** A command (`serve`) or a group of subcommands (`keys` → `create`, `list`, ...). */
export interface Command<F extends FlagTable = FlagTable> {
  /** One line for the command list. */
  summary: string;
  /** What follows the command name in the usage line, e.g. `<ip> [<ip> ...]`. */
  usage?: string;
  /** The command's own flags (configuration flags are always accepted too). */
  flags?: F;
  /** How many positional arguments it takes (default: none). */
  positionals?: { min: number; max: number };
  /** Extra help text after the flags. */
  details?: string;
  /**
   * The server settings this command reads: its help lists these and points
   * to `serve --help` for the rest (every setting is accepted by every
   * command). Absent: the help lists every setting.
   */
  settings?: readonly (keyof Config)[];
  /**
   * Defaults this command uses in place of the server's, as its help shows them
   * (`enrich` keeps more records cached than a server does).
   */
  settingDefaults?: Partial<Record<keyof Config, string>>;
  /** Runs the command; returns the exit status. Absent on a group. */
  run?: (line: CommandLine<F>) => Promise<number>;
  /** Subcommands of a group, by name. */
  subcommands?: Readonly<Record<string, Command<FlagTable>>>;
}

/**
 * Declares a command, keeping its flag table's type for `run`.
 *
 * @example defineCommand({ summary: "Say hi", flags: { loud: { type: "boolean", description: "Shout" } }, run: async ({ flags }) => (console.log(flags.loud ? "HI" : "hi"), 0) })
 */
export function defineCommand<F extends FlagTable>(command: Command<F>): Command<FlagTable> {
  return command as unknown as Command<FlagTable>;
}

type Env = Record<string, string | undefined>;

/**
 * Finds the command named by `args` in `root` (descending into groups), parses
 * its flags and configuration, and runs it. Usage and configuration errors are
 * printed as one line on stderr with exit status 2.
 */
export async function runCommand(
  root: Command,
  args: readonly string[],
  env: Env,
  program = "ipintel",
): Promise<number> {
  let command = root;
  let path = program;
  let rest = [...args];
  while (command.subcommands) {
    const name = rest[0];
    if (name === undefined || name.startsWith("-")) {
      // No subcommand: --help / --version are fine, anything else is a usage error.
      return groupWithoutSubcommand(command, path, rest);
    }
    const next = command.subcommands[name];
    if (!next) {
      console.error(
        `${path}: Unknown command ${JSON.stringify(name)}\n\n${helpFor(command, path)}`,
      );
      return 2;
    }
    command = next;
    path = `${path} ${name}`;
    rest = rest.slice(1);
  }
  try {
    const { flags, config: configFlags, positionals } = parseFlags(rest, command.flags ?? {});
    if (flags.help) {
      console.log(helpFor(command, path));
      return 0;
    }
    if (flags.version) {
      console.log(`${program} ${VERSION}`);
      return 0;
    }
    const { min, max } = command.positionals ?? { min: 0, max: 0 };
    if (positionals.length < min || positionals.length > max) {
      const what = positionals.length > max
        ? `Unexpected argument ${JSON.stringify(positionals[max])}`
        : "Missing argument";
      throw new UsageError(`${what}\nUsage: ${usageLine(command, path)}`);
    }
    const config = commandConfig(env, configFlags);
    const chosen = new Set(
      OPTIONS.filter((o) => configFlags[o.flag] !== undefined || (env[o.env] ?? "") !== "")
        .map((o) => o.key),
    );
    return await command.run!({ config, chosen, flags, positionals });
  } catch (error) {
    console.error(`${path}: ${error instanceof Error ? error.message : error}`);
    return error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
  }
}

function groupWithoutSubcommand(command: Command, path: string, rest: string[]): number {
  try {
    const { flags } = parseFlags(rest, {});
    if (flags.version) {
      console.log(`${path.split(" ")[0]} ${VERSION}`);
      return 0;
    }
    if (flags.help) {
      console.log(helpFor(command, path));
      return 0;
    }
  } catch (error) {
    console.error(`${path}: ${(error as Error).message}`);
    return 2;
  }
  console.error(`${path}: Missing command\n\n${helpFor(command, path)}`);
  return 2;
}

function usageLine(command: Command, path: string): string {
  if (command.subcommands) return `${path} <command> [options]`;
  return [path, command.usage, "[options]"].filter(Boolean).join(" ");
}

/** The help of one command or group, built from the declarations so it never drifts. */
function helpFor(command: Command, path: string): string {
  const lines = [command.summary, "", `Usage: ${usageLine(command, path)}`];
  if (command.subcommands) {
    lines.push("", "Commands:");
    for (const [name, sub] of Object.entries(command.subcommands)) {
      lines.push(`  ${[name, sub.usage].filter(Boolean).join(" ").padEnd(30)} ${sub.summary}`);
    }
    lines.push("", `Run "${path} <command> --help" for a command's options.`);
  }
  const own: FlagTable = { ...(command.flags ?? {}), ...COMMON_FLAGS };
  const ownLines = Object.entries(own).map(([name, spec]) => {
    const flag = [
      spec.short ? `-${spec.short},` : "   ",
      `--${name}${spec.type === "string" ? ` ${spec.placeholder ?? "<value>"}` : ""}`,
    ].join(" ");
    return `  ${flag.padEnd(30)} ${spec.description}`;
  });
  if (ownLines.length) lines.push("", "Options:", ...ownLines);
  if (command.settings) {
    const read = new Set<string>(command.settings);
    lines.push(
      "",
      "Settings it reads (flags win over environment variables):",
      ...settingsTable(OPTIONS.filter((o) => read.has(o.key)), command.settingDefaults),
      "",
      `The server's other settings are accepted too: "${
        path.split(" ")[0]
      } serve --help" lists every one.`,
    );
  } else if (!command.subcommands || path.indexOf(" ") === -1) {
    lines.push(
      "",
      "Configuration (flags win over environment variables):",
      ...settingsTable(OPTIONS),
    );
  }
  if (command.details) lines.push("", command.details);
  return lines.join("\n");
}

/**
 * Settings as the README's configuration table lists them (flag first, as a
 * command line gives it): flag, variable, default, meaning, in aligned columns.
 */
function settingsTable(
  options: readonly AnyOptionSpec[],
  defaults: Partial<Record<string, string>> = {},
): string[] {
  const rows = [
    ["flag", "variable", "default", "meaning"],
    ...options.map((o) => [`--${o.flag}`, o.env, defaults[o.key] ?? defaultText(o), o.description]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) =>
    `  ${widths.map((width, i) => row[i]!.padEnd(width)).join("  ")}  ${row[3]}`
  );
}
