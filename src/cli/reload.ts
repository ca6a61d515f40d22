/** Hot reload: a new manifest means a new, complete data set, swapped in whole or not at all. */

import type { Config } from "../config.ts";
import type { ServiceSlot } from "../http/app.ts";
import { type ManifestWatch, watchManifest } from "../sources/manifest_watch.ts";
import { createServices, type SharedParts } from "./services.ts";

/**
 * Watches the data directory; on a new manifest opens and verifies the new
 * set, then replaces `services.current` in one assignment (requests in flight
 * finish on the set they started with). A set that fails is logged and ignored.
 */
export function startHotReload(
  config: Config,
  services: ServiceSlot,
  shared: SharedParts,
  log: (line: string) => void = (line) => console.error(line),
  options: { pollMs?: number } = {},
): ManifestWatch {
  return watchManifest(config.dataDir, async () => {
    try {
      services.current = await createServices(config, shared);
      log(`ipintel: new data loaded from ${config.dataDir}`);
    } catch (error) {
      log(
        `ipintel: new data in ${config.dataDir} not loaded, still serving the previous set: ${
          error instanceof Error ? error.message : error
        }`,
      );
    }
  }, options);
}
