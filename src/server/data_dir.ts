/**
 * The settings checked against the file system at start-up, given to
 * `loadConfig` by every entry point (config.ts itself stays pure): the data
 * directory, when set, must exist.
 */

import { type Config, DATA_DIR_ACCEPTED, invalid, type SettingChecks } from "../config.ts";

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
