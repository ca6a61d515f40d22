/**
 * A source on this machine (a `file://` URL or a path in the sources file),
 * for closed networks: read instead of downloaded, then checked, compiled and
 * installed like a download. Its size, modification time and SHA-256 are
 * recorded, so the next update reads a file whose size and time are unchanged
 * not at all, and one that was only touched (same bytes) installs nothing.
 */

import { fileURLToPath } from "node:url";
import { type LocalFileState, sha256Hex } from "../sources/manifest.ts";
import { CapExceededError } from "./limits.ts";

/** What an update recorded of a local file (kept in the manifest entry's download state). */
export type LocalState = LocalFileState;

export type LocalRead =
  /** Unchanged since `known`; `state` is the file's current one when only its time changed. */
  | { status: "not-modified"; state?: LocalState }
  | { status: "ok"; bytes: Uint8Array; state: LocalState; lastModified?: string };

/** The file a `file://` URL names. */
export function localPath(url: string): string {
  return fileURLToPath(url);
}

/**
 * Reads a local source unless it is unchanged since `known`; errors name the
 * file. Past `maxBytes` it is refused like a download (the sources file's cap).
 */
export async function readLocalSource(
  url: string,
  options: { maxBytes: number; known?: LocalState },
): Promise<LocalRead> {
  const path = localPath(url);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    throw new Error(`Cannot read ${path}: ${reasonOf(error)}`);
  }
  if (!info.isFile) throw new Error(`Cannot read ${path}: it is not a file`);
  if (info.size > options.maxBytes) {
    throw new CapExceededError(`${path} (${info.size} bytes)`, options.maxBytes, "maxDownloadMB");
  }
  const mtime = info.mtime?.toISOString() ?? null;
  const { known } = options;
  if (known && known.size === info.size && known.mtime === mtime && mtime !== null) {
    return { status: "not-modified" };
  }
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    throw new Error(`Cannot read ${path}: ${reasonOf(error)}`);
  }
  if (bytes.length > options.maxBytes) {
    throw new CapExceededError(path, options.maxBytes, "maxDownloadMB");
  }
  const state: LocalState = { size: bytes.length, mtime, sha256: await sha256Hex(bytes) };
  if (known && known.sha256 === state.sha256) return { status: "not-modified", state };
  return {
    status: "ok",
    bytes,
    state,
    ...(info.mtime ? { lastModified: info.mtime.toUTCString() } : {}),
  };
}

/** The text of a small local file (a `.sha256` beside a database). */
export async function readLocalText(url: string): Promise<string> {
  const path = localPath(url);
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    throw new Error(`Cannot read ${path}: ${reasonOf(error)}`);
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "it does not exist";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  return error instanceof Error ? error.message : String(error);
}
