/** Opens the Deno KV that holds API keys and rate-limit counters (server and CLI share it). */

import { dirname, join } from "node:path";
import { type Config, isEmbeddedData } from "../../base/config.ts";
import type { ReadinessCheck } from "../../service/ops/readiness.ts";
import { BusyRetry, KvBusyError } from "../../data/store/busy.ts";

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

/**
 * Opens the KV; a failure names the location and the setting. Opening writes too (SQLite's
 * journal mode, Deno KV's schema), so a busy KV is waited for like any write. A KV file is
 * created readable by its owner only (0600): it holds key names, key hashes,
 * limits and usage. SQLite gives its -wal and -shm files the same mode.
 */
export async function openKv(config: Pick<Config, "kv" | "dataDir">): Promise<Deno.Kv> {
  const location = kvLocation(config);
  try {
    if (isLocalFile(location)) await createPrivately(location);
    return await new BusyRetry({ location }).run(() => Deno.openKv(location));
  } catch (error) {
    if (error instanceof KvBusyError) throw error; // it names the KV and the cause
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Cannot open the Deno KV at "${location}" (IPINTEL_KV): ${reason}`);
  }
}

/** The readiness check of the KV: one read of a key nothing writes. */
export function kvReadinessCheck(kv: Deno.Kv): ReadinessCheck {
  return { name: "Deno KV", check: () => kv.get(["health", "probe"]) };
}

/** Not `:memory:` and not a KV Connect URL. */
function isLocalFile(location: string): boolean {
  return location !== ":memory:" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(location);
}

/** Creates an empty file with mode 0600 unless one exists (SQLite takes an empty file as a new database). */
async function createPrivately(path: string): Promise<void> {
  try {
    (await Deno.open(path, { write: true, createNew: true, mode: 0o600 })).close();
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
}
