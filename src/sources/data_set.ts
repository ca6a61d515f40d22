/** Opens the databases a data directory's manifest lists: the sources of one lookup. */

import { DataUnavailableError } from "../errors.ts";
import { type MmdbDatabase, openMmdb } from "../mmdb/reader.ts";
import { type Manifest, readManifest } from "../update/manifest.ts";
import type { AsnRecord, CityRecord } from "./records.ts";

/** The loaded databases; any may be absent, but at least one is present. */
export interface DataSet {
  readonly city: MmdbDatabase<CityRecord> | null;
  readonly asn: MmdbDatabase<AsnRecord> | null;
  readonly manifest: Manifest;
}

/**
 * Reads `manifest.json` and opens each database it lists. A missing or
 * unreadable file is an error naming it (never silently "not found" later).
 */
export async function openDataSet(
  dataDir: string,
  options: { cacheSize?: number } = {},
): Promise<DataSet> {
  const manifest = await readManifest(dataDir);
  if (!manifest) {
    throw new DataUnavailableError(
      `No data in ${dataDir}: manifest.json is missing (run "deno task data")`,
    );
  }
  const open = async <T>(kind: string): Promise<MmdbDatabase<T> | null> => {
    const entry = manifest.sources.find((e) => e.kind === kind);
    if (!entry) return null;
    const path = `${dataDir}/${entry.file}`;
    try {
      return openMmdb<T>(await Deno.readFile(path), options);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new DataUnavailableError(`Cannot open ${kind} database ${path}: ${reason}`);
    }
  };
  const city = await open<CityRecord>("city");
  const asn = await open<AsnRecord>("asn");
  if (!city && !asn) {
    throw new DataUnavailableError(`No usable database in ${dataDir}/manifest.json`);
  }
  return { city, asn, manifest };
}
