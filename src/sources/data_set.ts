/**
 * Opens the databases a data directory's manifest lists, plus the operator's
 * own MMDB files: the sources of one lookup. Every file is checked (hash,
 * structure, kind) before the set is returned; a set that fails is never used.
 */

import { DataUnavailableError } from "../errors.ts";
import type { MmdbDatabase } from "../mmdb/reader.ts";
import { createRiskSource, type FeedMembership, type RiskSource } from "../risk/security.ts";
import {
  DATABASE_KINDS,
  type DatabaseKind,
  entryName,
  FEED_KINDS,
  type FeedKind,
  type Manifest,
  type ManifestEntry,
  readManifest,
  sha256Hex,
  type SourceKind,
} from "./manifest.ts";
import type {
  AnonymousIpRecord,
  AsnRecord,
  CityRecord,
  ConnectionTypeRecord,
  DomainRecord,
  FeedRecord,
  IspRecord,
} from "./records.ts";
import type { SourceSpec } from "./sources_file.ts";
import { verifyMmdb } from "./verify_mmdb.ts";

/** An operator's own database, given by an environment variable or flag. */
export interface OperatorDatabase {
  kind: DatabaseKind;
  path: string;
  /** The variable that named it, for error messages (`IPINTEL_ISP_DB`). */
  variable: string;
}

/** What /status reports of one loaded source. */
export interface InstalledSource {
  name: string;
  kind: SourceKind;
  /** Where it came from: URL, `npm:` package, or the operator's file path. */
  source: string;
  databaseType: string;
  /** ISO 8601 date of the data itself; null when its publisher gives none. */
  dataDate: string | null;
  count: number | null;
  license: string;
  attribution: string;
}

/** A configured source that is not installed. */
export interface AbsentSource {
  name: string;
  kind: SourceKind;
  reason: string;
}

/** The loaded databases; any may be absent, but city or ASN is present. */
export interface DataSet {
  readonly city: MmdbDatabase<CityRecord> | null;
  readonly asn: MmdbDatabase<AsnRecord> | null;
  readonly isp: MmdbDatabase<IspRecord> | null;
  readonly connectionType: MmdbDatabase<ConnectionTypeRecord> | null;
  readonly domain: MmdbDatabase<DomainRecord> | null;
  readonly anonymousIp: MmdbDatabase<AnonymousIpRecord> | null;
  /** Security flags from the feeds and the Anonymous-IP database. */
  readonly risk: RiskSource;
  readonly manifest: Manifest;
  readonly installed: readonly InstalledSource[];
  readonly absent: readonly AbsentSource[];
}

export interface OpenOptions {
  cacheSize?: number;
  /** Operator databases; each replaces the manifest's database of its kind. */
  databases?: readonly OperatorDatabase[];
  /** The sources file's entries, to report the ones not installed. */
  configured?: readonly SourceSpec[];
}

/**
 * Reads `manifest.json` and opens each database it lists. A missing,
 * altered or corrupt file is an error naming it (never silently "not found" later).
 */
export async function openDataSet(dataDir: string, options: OpenOptions = {}): Promise<DataSet> {
  const operator = options.databases ?? [];
  const manifest = await readManifest(dataDir) ??
    (operator.length ? { sources: [] } : null);
  if (!manifest) {
    throw new DataUnavailableError(
      `No data in ${dataDir}: manifest.json is missing (run "deno task data")`,
    );
  }
  const files = new Map<string, Promise<Uint8Array>>();
  const readChecked = (entry: ManifestEntry): Promise<Uint8Array> => {
    let bytes = files.get(entry.file);
    if (!bytes) {
      const path = `${dataDir}/${entry.file}`;
      bytes = Deno.readFile(path).then(async (b) => {
        if (entry.sha256 && (await sha256Hex(b)) !== entry.sha256) {
          throw new Error(`${path} does not match the sha256 in manifest.json`);
        }
        return b;
      });
      files.set(entry.file, bytes);
    }
    return bytes;
  };
  const installed: InstalledSource[] = [];

  const openKind = async <T>(kind: DatabaseKind): Promise<MmdbDatabase<T> | null> => {
    const mine = operator.find((d) => d.kind === kind);
    if (mine) return openOperatorDatabase<T>(mine, options.cacheSize, installed);
    const entry = manifest.sources.find((e) => e.kind === kind);
    if (!entry) return null;
    const path = `${dataDir}/${entry.file}`;
    try {
      const { db, networks } = verifyMmdb<T>(await readChecked(entry), {
        kind,
        cacheSize: options.cacheSize,
        label: path,
      });
      installed.push(describe(entry, db.metadata.buildEpoch, entry.count ?? networks));
      return db;
    } catch (error) {
      throw new DataUnavailableError(`Cannot open ${kind} database ${path}: ${reason(error)}`);
    }
  };
  const city = await openKind<CityRecord>("city");
  const asn = await openKind<AsnRecord>("asn");
  const isp = await openKind<IspRecord>("isp");
  const connectionType = await openKind<ConnectionTypeRecord>("connection-type");
  const domain = await openKind<DomainRecord>("domain");
  const anonymousIp = await openKind<AnonymousIpRecord>("anonymous-ip");
  if (!city && !asn) {
    throw new DataUnavailableError(`No usable City or ASN database in ${dataDir}/manifest.json`);
  }

  const feeds = {} as Record<FeedKind, FeedMembership | null>;
  for (const kind of FEED_KINDS) {
    const entries = manifest.sources.filter((e) => e.kind === kind);
    try {
      feeds[kind] = entries.length
        ? await openFeed(entries, readChecked, options.cacheSize, installed)
        : null;
    } catch (error) {
      throw new DataUnavailableError(
        `Cannot open the ${kind} feeds in ${dataDir}: ${reason(error)}`,
      );
    }
  }
  const risk = createRiskSource({ ...feeds, anonymousIp });
  const names = new Set(installed.map((s) => s.name));
  // A database kind has one source: an installed one (maybe under an older name, or the
  // operator's own file) stands for the configured one.
  const databaseKinds = new Set<SourceKind>(
    installed.filter((s) => (DATABASE_KINDS as readonly string[]).includes(s.kind)).map((s) =>
      s.kind
    ),
  );
  const absent = (options.configured ?? [])
    .filter((s) => !names.has(s.name) && !databaseKinds.has(s.kind))
    .map((s) => ({
      name: s.name,
      kind: s.kind,
      reason: manifest.failures?.[s.name]?.reason ??
        'Not downloaded yet: run "deno task ipintel data update"',
    }));
  return { city, asn, isp, connectionType, domain, anonymousIp, risk, manifest, installed, absent };
}

/** One feed kind: the union of its compiled trees and AS-number lists. */
async function openFeed(
  entries: ManifestEntry[],
  read: (entry: ManifestEntry) => Promise<Uint8Array>,
  cacheSize: number | undefined,
  installed: InstalledSource[],
): Promise<FeedMembership> {
  const trees: MmdbDatabase<FeedRecord>[] = [];
  const asns = new Set<number>();
  const seen = new Set<string>();
  for (const entry of entries) {
    const bytes = await read(entry);
    if (!seen.has(entry.file)) {
      seen.add(entry.file);
      if (entry.file.endsWith(".json")) {
        for (const asn of parseAsnSet(bytes, entry.file)) asns.add(asn);
      } else {
        // Feed trees cache little: a record is just the list's name.
        try {
          trees.push(
            verifyMmdb<FeedRecord>(bytes, {
              cacheSize: Math.min(cacheSize ?? 64, 64),
              label: entry.file,
            }).db,
          );
        } catch (error) {
          throw new Error(`${entry.file}: ${reason(error)}`);
        }
      }
    }
    installed.push(describe(entry, null, entry.count ?? null));
  }
  return {
    has(ip, asn) {
      for (const tree of trees) if (tree.getBytes(ip.bytes) !== null) return true;
      return asn !== null && asns.has(asn);
    },
  };
}

function parseAsnSet(bytes: Uint8Array, file: string): number[] {
  const list = JSON.parse(new TextDecoder().decode(bytes));
  if (!Array.isArray(list) || list.some((n) => !Number.isInteger(n) || n < 0 || n > 0xffffffff)) {
    throw new Error(`${file}: expected a JSON array of AS numbers`);
  }
  return list;
}

async function openOperatorDatabase<T>(
  d: OperatorDatabase,
  cacheSize: number | undefined,
  installed: InstalledSource[],
): Promise<MmdbDatabase<T>> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(d.path);
  } catch (error) {
    throw new Error(`Invalid ${d.variable} "${d.path}": ${reason(error)}`);
  }
  try {
    const { db, networks } = verifyMmdb<T>(bytes, { kind: d.kind, cacheSize, label: d.path });
    const m = db.metadata;
    installed.push({
      name: d.variable,
      kind: d.kind,
      source: d.path,
      databaseType: m.databaseType,
      dataDate: m.buildEpoch.toISOString(),
      count: networks,
      license: "Operator-supplied database: see its vendor's licence",
      attribution: m.description.en ?? m.databaseType,
    });
    return db;
  } catch (error) {
    throw new Error(`Invalid ${d.variable} "${d.path}": ${reason(error)}`);
  }
}

function describe(entry: ManifestEntry, buildEpoch: Date | null, count: number | null) {
  return {
    name: entryName(entry),
    kind: entry.kind,
    source: entry.source,
    databaseType: entry.databaseType,
    // A database's own build time, unless the manifest knows better (an npm publication date).
    dataDate: entry.dataDate !== undefined ? entry.dataDate : buildEpoch?.toISOString() ?? null,
    count,
    license: entry.license,
    attribution: entry.attribution,
  };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
