/**
 * Notices a new `manifest.json` in a data directory, or a new history of the
 * lists (an update that confirmed the lists changes no file but the history:
 * their lastSeen): a file-system watch for speed, and polling as a fallback
 * (watches miss events on some file systems and containers). Calls back once
 * per change, never concurrently.
 */

import { HISTORY_FILE } from "../history/history_file.ts";
import { MANIFEST_FILE } from "./manifest.ts";

export interface ManifestWatch {
  close(): void;
}

/**
 * Watches `dataDir/manifest.json` and the history file; `onChange` runs after
 * the manifest's content or the history file changes (debounced), one call at
 * a time. `pollMs` bounds how late a change is seen.
 */
export function watchManifest(
  dataDir: string,
  onChange: () => Promise<void>,
  options: { pollMs?: number; debounceMs?: number } = {},
): ManifestWatch {
  const path = `${dataDir}/${MANIFEST_FILE}`;
  const historyPath = `${dataDir}/${HISTORY_FILE}`;
  const pollMs = options.pollMs ?? 2000;
  const debounceMs = options.debounceMs ?? 150;
  let closed = false;
  let known: string | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let debounce: ReturnType<typeof setTimeout> | undefined;

  /** The manifest's text and the history file's stamp (it is replaced whole, by rename). */
  const read = async () => {
    const text = await Deno.readTextFile(path).catch(() => null);
    if (text === null) return null;
    const history = await Deno.stat(historyPath).then(
      (info) => `${info.size}:${info.mtime?.getTime() ?? ""}:${info.ino ?? ""}`,
      () => "none",
    );
    return `${history}\n${text}`;
  };
  const check = () => {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        const text = await read();
        if (closed || text === null || text === known) continue;
        known = text;
        await onChange();
      } while (again && !closed);
    })().finally(() => running = null);
  };
  const soon = () => {
    clearTimeout(debounce);
    debounce = setTimeout(check, debounceMs);
  };

  read().then((text) => known ??= text);
  const poll = setInterval(check, pollMs);
  let watcher: Deno.FsWatcher | null = null;
  try {
    watcher = Deno.watchFs(dataDir, { recursive: false });
    (async () => {
      try {
        for await (const event of watcher!) {
          if (event.paths.some((p) => p.endsWith(MANIFEST_FILE) || p.endsWith(HISTORY_FILE))) {
            soon();
          }
        }
      } catch {
        // The watch ended (directory gone, closed): polling carries on.
      }
    })();
  } catch {
    watcher = null; // no watch support here: polling alone
  }
  return {
    close() {
      closed = true;
      clearInterval(poll);
      clearTimeout(debounce);
      try {
        watcher?.close();
      } catch {
        // already closed
      }
    },
  };
}
