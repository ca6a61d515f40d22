/** Hot reload: a new manifest means a new, complete data set, swapped in whole or not at all. */

import type { Config } from "../../base/config.ts";
import { type ManifestWatch, watchManifest } from "../../data/sources/manifest_watch.ts";

/** How a new set is opened, where it goes, and how each attempt is counted (the server's metrics). */
export interface ReloadTarget<T> {
  /** Opens and verifies the new set; throws when it is not usable. */
  load(): Promise<T>;
  /** Serves the set: resolves once every isolate serves it; throws (everything kept as it was) when it cannot. */
  install(next: T): void | Promise<void>;
  recordReload?(result: "success" | "failure"): void;
  /**
   * What the set answers from (its X-Data-Version id). A set of the version
   * already served is swapped in quietly: its manifest changed without a file
   * (an update that confirmed the lists, or recorded a failure), and what it
   * brings is the lists' history (lastSeen) and the failures /status shows.
   * Without it, every new set is said.
   */
  version?(set: T): string;
}

/**
 * Watches the data directory; on a new manifest opens and verifies the new
 * set, then installs it in one step (requests in flight finish on the set
 * they started with), and says so once it is served everywhere (unless no
 * file changed: see ReloadTarget.version). A set that fails to open or
 * install is logged, counted and ignored: the previous one stays. `served`:
 * the set served when the watch starts.
 */
export function startHotReload<T>(
  config: Config,
  target: ReloadTarget<T>,
  log: (line: string) => void = (line) => console.error(line),
  options: { pollMs?: number; served?: T } = {},
): ManifestWatch {
  const versionOf = (set: T | undefined) =>
    set === undefined || !target.version ? null : target.version(set);
  let served = versionOf(options.served);
  return watchManifest(config.dataDir, async () => {
    try {
      const next = await target.load();
      await target.install(next);
      target.recordReload?.("success");
      const version = versionOf(next);
      if (version === null || version !== served) {
        log(`ipintel: new data loaded from ${config.dataDir}`);
      }
      served = version;
    } catch (error) {
      target.recordReload?.("failure");
      log(
        `ipintel: new data in ${config.dataDir} not loaded, still serving the previous set: ${
          error instanceof Error ? error.message : error
        }`,
      );
    }
  }, { pollMs: options.pollMs });
}
