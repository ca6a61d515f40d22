/** Hot reload: a new manifest means a new, complete data set, swapped in whole or not at all. */

import type { Config } from "../config.ts";
import { type ManifestWatch, watchManifest } from "../sources/manifest_watch.ts";
import { createServices, type Services, type SharedParts } from "./services.ts";

/** Where a reloaded set goes, and how each attempt is counted (the server's metrics). */
export interface ReloadTarget {
  install(next: Services): void;
  recordReload?(result: "success" | "failure"): void;
}

/**
 * Watches the data directory; on a new manifest opens and verifies the new
 * set, then installs it in one step (requests in flight finish on the set
 * they started with). A set that fails is logged and ignored.
 */
export function startHotReload(
  config: Config,
  shared: SharedParts,
  target: ReloadTarget,
  log: (line: string) => void = (line) => console.error(line),
  options: { pollMs?: number } = {},
): ManifestWatch {
  return watchManifest(config.dataDir, async () => {
    try {
      target.install(await createServices(config, shared));
      target.recordReload?.("success");
      log(`ipintel: new data loaded from ${config.dataDir}`);
    } catch (error) {
      target.recordReload?.("failure");
      log(
        `ipintel: new data in ${config.dataDir} not loaded, still serving the previous set: ${
          error instanceof Error ? error.message : error
        }`,
      );
    }
  }, options);
}
