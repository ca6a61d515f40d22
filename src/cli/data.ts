/** `ipintel data`: installs the default data set (idempotent). */

import { type Config, ConfigError, isEmbeddedData } from "../config.ts";
import { defineCommand } from "./command.ts";
import { buildDefaultData } from "../update/build.ts";
import { DEFAULT_SOURCES } from "../update/default_sources.ts";

export const dataCommand = defineCommand({
  summary: "Download and build the default data into the data directory",
  flags: {
    force: { type: "boolean", description: "Rebuild even when the data is up to date" },
  },
  run: ({ config, flags }) => runData(config, { force: flags.force ?? false }),
});

/** Builds missing or outdated default data; progress and a summary go to stderr. */
export async function runData(config: Config, options: { force: boolean }): Promise<number> {
  if (isEmbeddedData(config.dataDir)) {
    throw new ConfigError(
      "The data embedded in this binary is read-only: set IPINTEL_DATA_DIR (or --data-dir) to an existing directory to build the data into, and serve with the same setting",
    );
  }
  const { force } = options;
  const started = performance.now();
  const report = await buildDefaultData({
    dataDir: config.dataDir,
    registry: config.registry,
    sources: DEFAULT_SOURCES,
    force,
    progress: (message) => console.error(`data: ${message}`),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const built = report.built.length ? `built ${report.built.join(", ")}` : "nothing to build";
  const current = report.upToDate.length ? `; up to date: ${report.upToDate.join(", ")}` : "";
  console.error(`data: ${built}${current} (${seconds} s, in ${config.dataDir})`);
  return 0;
}

/** Builds the data only when the manifest is missing (used by `serve` on first run). */
export async function ensureData(config: Config): Promise<void> {
  try {
    await Deno.stat(`${config.dataDir}/manifest.json`);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    console.error(`data: ${config.dataDir}/manifest.json is missing; building the default data`);
    await runData(config, { force: false });
  }
}
