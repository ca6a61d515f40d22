/**
 * The settings checked against the file system at start-up, given to
 * `loadConfig` by every entry point (config.ts itself stays pure): the data
 * directory, when set, must exist; and whether this process can write it.
 */

import {
  type Config,
  ConfigError,
  DATA_DIR_ACCEPTED,
  invalid,
  type SettingChecks,
} from "../../base/config.ts";

export const FILE_CHECKS: SettingChecks = { dataDir: existingDirectory };

/** Throws a ConfigError naming `name` unless `path` is an existing directory. */
function existingDirectory(path: Config["dataDir"], name: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = Deno.statSync(path).isDirectory;
  } catch (error) {
    throw invalid(
      name,
      path,
      error instanceof Deno.errors.NotFound
        ? `${DATA_DIR_ACCEPTED}; it does not exist`
        : `${DATA_DIR_ACCEPTED}; ${(error as Error).message}`,
    );
  }
  if (!isDirectory) throw invalid(name, path, `${DATA_DIR_ACCEPTED}; it is a file`);
}

/**
 * Why this process cannot write `dataDir` (a read-only mount, a directory
 * owned by another user), or null when it can: a probe file is created and
 * removed. Other failures (a full disk) are not this problem: null, and the
 * writer that meets them reports them.
 */
export async function dataDirWriteProblem(dataDir: string): Promise<string | null> {
  // Named like a temporary (`.tmp-<pid>`), so a writer removes it if this process dies first.
  const probe = `${dataDir}/.write-check.tmp-${Deno.pid}`;
  try {
    await Deno.writeFile(probe, new Uint8Array(0));
  } catch (error) {
    const message = (error as Error).message;
    if (
      error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable ||
      /read-only file system|os error 30\b|EROFS/i.test(message)
    ) {
      return `the data directory ${dataDir} is read-only (${shortReason(message)})`;
    }
    return null;
  }
  await Deno.remove(probe).catch(() => {});
  return null;
}

/** A data directory a build or update cannot write: a configuration problem (exit status 2). */
export class ReadOnlyDataDirError extends ConfigError {
  override name = "ReadOnlyDataDirError";
}

/** Throws ReadOnlyDataDirError, naming the directory and what to do, unless it can be written. */
export async function checkDataDirWritable(dataDir: string): Promise<void> {
  const problem = await dataDirWriteProblem(dataDir);
  if (problem) {
    throw new ReadOnlyDataDirError(
      `Cannot install data: ${problem}. Make it writable by this user, or set IPINTEL_DATA_DIR (--data-dir) to a directory that is`,
    );
  }
}

/** "Permission denied (os error 13): writefile '/x'" → "Permission denied". */
function shortReason(message: string): string {
  return message.replace(/\s*\(os error \d+\).*$/s, "").replace(/:\s*\w+ '.*$/s, "");
}
