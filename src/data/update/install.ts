/**
 * The one place a data directory is written: under its lock, for as long as
 * installing takes and no longer. Downloads, decompression and checks happen
 * before (with no lock), so a writer whose feed hosts hang or do not resolve
 * never keeps `deno task data` (or another update) waiting.
 */

import { type Manifest, readManifest, removeUnnamed, writeManifest } from "../sources/manifest.ts";
import { DataLockedError, lockDataDir } from "./lock.ts";

export interface InstallOptions {
  /** What this writer is, for another writer's "waiting for" line (e.g. "data update"). */
  purpose: string;
  /** Wait for another writer (default), or fail naming it. */
  waitForLock?: boolean;
  /** Told once, naming the holder, when waiting. */
  onWait?: (holder: string) => void;
  signal?: AbortSignal;
}

/**
 * Takes the lock, reads the manifest as it is now (another writer may have
 * changed it since this one read it), clears what a killed writer left, lets
 * `change` install files and edit the manifest, writes it (the atomic switch)
 * and removes the files only the old manifest named. `change` returning false
 * writes nothing. Returns what `change` returned.
 */
export async function installLocked(
  dataDir: string,
  options: InstallOptions,
  change: (manifest: Manifest) => Promise<boolean>,
): Promise<boolean> {
  using _lock = await lockDataDir(dataDir, {
    purpose: options.purpose,
    wait: options.waitForLock ?? true,
    onWait: options.onWait,
    signal: options.signal,
  });
  const previous = await readManifest(dataDir);
  // Under the lock, a temporary or an unnamed content file is a killed writer's.
  await removeUnnamed(dataDir, null, previous ?? { sources: [] });
  const manifest: Manifest = structuredClone(previous) ?? { sources: [] };
  if (!(await change(manifest))) return false;
  await writeManifest(dataDir, manifest);
  await removeUnnamed(dataDir, previous, manifest);
  return true;
}

/**
 * Removes what a killed writer left (temporaries, unnamed content files), if
 * no writer holds the lock now: one that does removes them when it installs.
 * Never waits.
 */
export async function tidyDataDir(dataDir: string, purpose: string): Promise<void> {
  let lock;
  try {
    lock = await lockDataDir(dataDir, { purpose, wait: false });
  } catch (error) {
    if (error instanceof DataLockedError) return;
    throw error;
  }
  try {
    await removeUnnamed(dataDir, null, (await readManifest(dataDir)) ?? { sources: [] });
  } finally {
    lock.release();
  }
}
