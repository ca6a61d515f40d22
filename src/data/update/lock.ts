/**
 * One writer at a time: every command and schedule that writes a data
 * directory (`data`, `data update`, the server's updates) holds an exclusive
 * advisory lock on `<dataDir>/.lock` while it writes. The operating system
 * releases it when the process ends, however it ends (kill -9 included), so a
 * lock is never stale. The holder writes who it is into the file, so a second
 * writer can name it.
 */

import { sleep } from "../../base/sleep.ts";

export const LOCK_FILE = ".lock";

/** The lock is held by another process (and the caller chose not to wait). */
export class DataLockedError extends Error {
  constructor(dataDir: string, holder: string) {
    super(`${dataDir} is being written by ${holder}; try again when it has finished`);
    this.name = "DataLockedError";
  }
}

export interface DataLock {
  release(): void;
  [Symbol.dispose](): void;
}

export interface LockOptions {
  /** What this writer is, for the other writers' messages (e.g. "data update"). */
  purpose: string;
  /** Wait for the holder (true), or throw DataLockedError at once (false). */
  wait: boolean;
  /** Told once, naming the holder, when the lock is busy and we wait. */
  onWait?: (holder: string) => void;
  /** Stops the wait. */
  signal?: AbortSignal;
}

/** Takes the data directory's write lock; throws DataLockedError or, when stopped, an Error. */
export async function lockDataDir(dataDir: string, options: LockOptions): Promise<DataLock> {
  // A directory made here is the service's own: other users need not see in (0700).
  await Deno.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = `${dataDir}/${LOCK_FILE}`;
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  try {
    let told = false;
    while (!(await file.tryLock(true))) {
      const holder = await describeHolder(path);
      if (!options.wait) throw new DataLockedError(dataDir, holder);
      if (!told) options.onWait?.(holder);
      told = true;
      await sleep(200, options.signal);
      if (options.signal?.aborted) {
        throw new Error(`Waiting for the lock of ${dataDir} was cancelled`);
      }
    }
    const me = JSON.stringify({
      pid: Deno.pid,
      purpose: options.purpose,
      since: new Date().toISOString(),
    });
    await file.truncate(0);
    await file.write(new TextEncoder().encode(me + "\n"));
  } catch (error) {
    file.close();
    throw error;
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    file.close(); // closing the descriptor releases the lock
  };
  return { release, [Symbol.dispose]: release };
}

/** "process 123 (data update, since …)", from what the holder wrote. */
async function describeHolder(path: string): Promise<string> {
  try {
    const holder = JSON.parse(await Deno.readTextFile(path));
    return `process ${holder.pid} (${holder.purpose}, since ${holder.since})`;
  } catch {
    return "another process";
  }
}
