/** Opens the Deno KV that holds API keys and rate-limit counters (server and CLI share it). */

import { dirname, join } from "node:path";
import { type Config, isEmbeddedData } from "../config.ts";
import type { ReadinessCheck } from "../ops/readiness.ts";

/**
 * Where the KV lives: `IPINTEL_KV`, else `ipintel.kv` beside the data
 * directory; for a compiled binary serving its embedded (read-only) data,
 * `ipintel.kv` in the working directory.
 */
export function kvLocation(
  config: Pick<Config, "kv" | "dataDir">,
  standalone: boolean = Deno.build.standalone,
): string {
  if (config.kv !== null) return config.kv;
  if (isEmbeddedData(config.dataDir, standalone)) return join(Deno.cwd(), "ipintel.kv");
  return join(dirname(config.dataDir), "ipintel.kv");
}

/** Opens the KV; a failure names the location and the setting. */
export async function openKv(config: Pick<Config, "kv" | "dataDir">): Promise<Deno.Kv> {
  const location = kvLocation(config);
  try {
    return await Deno.openKv(location);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Cannot open the Deno KV at "${location}" (IPINTEL_KV): ${reason}`);
  }
}

/** The readiness check of the KV: one read of a key nothing writes. */
export function kvReadinessCheck(kv: Deno.Kv): ReadinessCheck {
  return { name: "Deno KV", check: () => kv.get(["health", "probe"]) };
}
