/**
 * Opens the databases a data directory's manifest lists, plus the operator's
 * own MMDB files: the sources of one lookup. Every file is checked (hash,
 * structure, kind) before the set is returned; a set that fails is never used.
 */

import { DataUnavailableError } from "../../base/errors.ts";
import { type History, loadHistory } from "../history/history.ts";
import { type MmdbDatabase, openMmdb } from "../mmdb/reader.ts";
import { createTreeWalk, type TreeWalk } from "../mmdb/tree.ts";
import {
  createRiskSource,
  type FeedMatch,
  type FeedMembership,
  RISK_KINDS,
  type RiskSource,
  type SourceFacts,
} from "../risk/security.ts";
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
  updateCommand,
} from "./manifest.ts";
import type {
  AnonymousIpRecord,
  AsnRecord,
  CityRecord,
  ConnectionTypeRecord,
  DomainRecord,
  FeedRecord,
  IspRecord,
} from "../mmdb/records.ts";
import type { SourceSpec } from "./sources_file.ts";
import { redactUrl, redactUrls } from "./redact_url.ts";
import { type DataVersion, dataVersion, type OperatorFingerprint } from "./data_version.ts";
import { VERIFIER_VERSION, verifyMmdb } from "./verify_mmdb.ts";

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

/** An installed crawler list: what a user agent's claim is judged against. */
export interface InstalledCrawler {
  /** The list's name in the sources file. */
  source: string;
  crawler: string;
  operator: string;
  /** The user-agent product tokens that claim it (may be none). */
  userAgents: readonly string[];
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
  /** The operator's geofeeds (`location` lists): answered ahead of the City database. */
  readonly location?: FeedMembership | null;
  /**
   * The installed crawler lists (`crawler` kind): each one's crawler, operator and
   * the user-agent tokens that claim it, in the manifest's order. Empty: none installed.
   */
  readonly crawlers?: readonly InstalledCrawler[];
  /** Each installed list kind's compiled trees and AS-number lists, as they are (the ASN view). */
  readonly feeds?: Readonly<Partial<Record<FeedKind, FeedContent>>>;
  readonly manifest: Manifest;
  /** The security lists' kept history (first/last seen, `at` answers); null when none is kept. */
  readonly history?: History | null;
  /**
   * Which data this is: an id that changes whenever the data answering changes
   * (data_version.ts), and when it was installed. For `X-Data-Version` and /status.
   */
  readonly version: DataVersion;
  readonly installed: readonly InstalledSource[];
  readonly absent: readonly AbsentSource[];
  /**
   * Why the set is not complete enough to be ready: a configured database
   * (the City and ASN of the default sources) is absent. Null when complete;
   * absent feeds do not count (a server on a closed network still gets ready).
   */
  readonly incomplete: string | null;
  /** The files as read and verified, in shared memory: only when opened with `share`. */
  readonly files?: VerifiedFiles;
  /**
   * Runs `scan` (synchronous) with the record caches of every database of the set
   * read but not filled (MmdbDatabase's withoutCacheFills): a streamed bulk
   * answer's batches. Absent on a set made by hand (tests): its caches are filled.
   */
  withoutCacheFills?<T>(scan: () => T): T;
}

/** One list kind's compiled content: for questions about whole networks, not one address. */
export interface FeedContent {
  readonly trees: readonly MmdbDatabase<FeedRecord>[];
  /** AS-number lists: AS number → the lists naming it. */
  readonly asns: ReadonlyMap<number, readonly string[]>;
}

/**
 * The files of a data set one isolate read and verified, for others to open
 * without reading or checking them again: the server's workers get them
 * (structured clone shares the memory), so one copy serves every core.
 */
export interface VerifiedFiles {
  manifest: Manifest;
  /** By path: the bytes (in a SharedArrayBuffer) and the networks a database's tree holds. */
  files: Map<string, { bytes: Uint8Array; networks: number | null }>;
}

export interface OpenOptions {
  cacheSize?: number;
  /** Operator databases; each replaces the manifest's database of its kind. */
  databases?: readonly OperatorDatabase[];
  /**
   * The sources file's entries, to report the ones not installed (absent: the
   * sources the manifest records, those of the file the data was installed from).
   */
  configured?: readonly Pick<SourceSpec, "name" | "kind">[];
  /** The sources file `configured` was read from (absolute): the one an absent source names. */
  sourcesFile?: string;
  /**
   * The sources the manifest records win over `configured` (a server given
   * no sources file of its own: manifest.ts serverSourcesFile).
   */
  preferInstalled?: boolean;
  /**
   * Whether the server updates the data on a schedule (default): an absent
   * source's reason says who installs it.
   */
  scheduledUpdates?: boolean;
  /** Read the files into shared memory and keep them as the set's `files`. */
  share?: boolean;
  /** Files another isolate verified: used as they are, with their manifest (see VerifiedFiles). */
  verified?: VerifiedFiles;
  /**
   * Files earlier opens with the same cache verified, while a data set still
   * holds their bytes: used again instead of read and hashed again (see
   * VerifiedFileCache). Absent: every file is read.
   */
  verifiedFiles?: VerifiedFileCache;
}

/**
 * Reads `manifest.json` and opens each database it lists. A missing,
 * altered or corrupt file is an error naming it (never silently "not found" later).
 */
export async function openDataSet(dataDir: string, options: OpenOptions = {}): Promise<DataSet> {
  const operator = options.databases ?? [];
  const verified = options.verified;
  const manifest = verified?.manifest ?? await readManifest(dataDir) ??
    (operator.length ? { sources: [] } : null);
  if (!manifest) {
    throw new DataUnavailableError(
      `No data in ${dataDir}: manifest.json is missing (run "deno task data")`,
    );
  }
  const shared: VerifiedFiles | undefined = options.share
    ? { manifest, files: new Map() }
    : undefined;
  const verifiedFiles = options.verifiedFiles;
  /**
   * A file's bytes: handed over verified, still held verified by a set opened
   * with the same `verifiedFiles` (the one this set replaces), or read (and
   * hash-checked when the manifest has one).
   */
  const readFile = async (path: string, sha256?: string): Promise<Uint8Array> => {
    const given = verified?.files.get(path);
    if (given) return given.bytes;
    const key = sha256 && verifiedFiles ? `${Boolean(shared)}:${path}:${sha256}` : null;
    const stamp = key ? await fileStamp(path) : null;
    const bytes = key && stamp ? verifiedFiles?.find(key, stamp) : undefined;
    if (bytes) return bytes;
    const read = await readWholeFile(path, Boolean(shared));
    if (sha256 && (await sha256Hex(read)) !== sha256) {
      throw new Error(`${path} does not match the sha256 in manifest.json`);
    }
    if (key && stamp) verifiedFiles?.hold(key, stamp, read);
    return read;
  };
  /** Every database the set opens (operator databases and feed trees included). */
  const databases: MmdbDatabase<unknown>[] = [];
  /**
   * Opens a database, checking its structure unless that was done: by another
   * isolate (handed over), or by the installer (`checked`: the entry records
   * these checks' version and the bytes matched its sha256).
   */
  const openChecked = <T>(
    path: string,
    bytes: Uint8Array,
    options: { kind?: DatabaseKind; cacheSize?: number; checked?: { networks: number | null } },
  ): { db: MmdbDatabase<T>; networks: number | null } => {
    const done = verified?.files.get(path) ?? options.checked;
    const opened = done
      ? {
        db: openMmdb<T>(bytes, { cacheSize: options.cacheSize, label: path }),
        networks: done.networks,
      }
      : verifyMmdb<T>(bytes, { ...options, label: path });
    shared?.files.set(path, { bytes, networks: opened.networks });
    databases.push(opened.db);
    return opened;
  };
  const files = new Map<string, Promise<Uint8Array>>();
  const readChecked = (entry: ManifestEntry): Promise<Uint8Array> => {
    let bytes = files.get(entry.file);
    if (!bytes) {
      const path = `${dataDir}/${entry.file}`;
      bytes = readFile(path, entry.sha256).then((b) => {
        // JSON lists are not databases: kept here, parsed again by whoever opens them.
        if (entry.file.endsWith(".json")) shared?.files.set(path, { bytes: b, networks: null });
        return b;
      });
      files.set(entry.file, bytes);
    }
    return bytes;
  };
  const installed: InstalledSource[] = [];
  const fingerprints: OperatorFingerprint[] = [];

  const openKind = async <T>(kind: DatabaseKind): Promise<MmdbDatabase<T> | null> => {
    const mine = operator.find((d) => d.kind === kind);
    if (mine) {
      return openOperatorDatabase<T>(
        mine,
        options.cacheSize,
        { installed, fingerprints },
        readFile,
        openChecked,
      );
    }
    const entry = manifest.sources.find((e) => e.kind === kind);
    if (!entry) return null;
    const path = `${dataDir}/${entry.file}`;
    try {
      // readChecked refuses bytes that do not match the entry's sha256.
      const checked = entry.sha256 && entry.verifier === VERIFIER_VERSION
        ? { networks: entry.count ?? null }
        : undefined;
      const { db, networks } = openChecked<T>(path, await readChecked(entry), {
        kind,
        cacheSize: options.cacheSize,
        checked,
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

  const feeds = {} as Record<FeedKind, (FeedMembership & { content: FeedContent }) | null>;
  for (const kind of FEED_KINDS) {
    const entries = manifest.sources.filter((e) => e.kind === kind);
    try {
      feeds[kind] = entries.length
        ? await openFeed(
          entries,
          readChecked,
          (entry, bytes) =>
            openChecked<FeedRecord>(`${dataDir}/${entry.file}`, bytes, {
              // Feed trees cache little: most addresses are on no list.
              cacheSize: Math.min(options.cacheSize ?? 1024, 1024),
              // Verified by the update that compiled it (walking a big tree here would
              // hold the serving isolate for seconds); the bytes matched its sha256.
              checked: entry.sha256 && entry.verifier === VERIFIER_VERSION
                ? { networks: null }
                : undefined,
            }).db,
          installed,
        )
        : null;
    } catch (error) {
      throw new DataUnavailableError(
        `Cannot open the ${kind} feeds in ${dataDir}: ${reason(error)}`,
      );
    }
  }
  const facts = new Map<string, SourceFacts>();
  for (const entry of manifest.sources) {
    const date = installed.find((s) => s.name === entryName(entry))?.dataDate ?? null;
    facts.set(entryName(entry), {
      dataDate: date,
      ...(entry.provider ? { provider: entry.provider } : {}),
      ...(entry.kind === "crawler" ? crawlerFacts(entry) : {}),
    });
  }
  const anonymousIpSource = installed.find((s) => s.kind === "anonymous-ip");
  if (anonymousIpSource) {
    facts.set(anonymousIpSource.name, { dataDate: anonymousIpSource.dataDate });
  }
  const history = await loadHistory(dataDir);
  const risk = createRiskSource({
    ...Object.fromEntries(RISK_KINDS.map((kind) => [kind, feeds[kind]])),
    crawler: feeds.crawler,
    anonymousIp,
    anonymousIpName: anonymousIpSource?.name,
    facts,
    seen: history?.seen,
  });
  const names = new Set(installed.map((s) => s.name));
  // A database kind has one source: an installed one (maybe under an older name, or the
  // operator's own file) stands for the configured one.
  const databaseKinds = new Set<SourceKind>(
    installed.filter((s) => (DATABASE_KINDS as readonly string[]).includes(s.kind)).map((s) =>
      s.kind
    ),
  );
  const recorded = manifest.sourcesFile && (options.preferInstalled || !options.configured)
    ? manifest.sourcesFile
    : null;
  const notYet = options.scheduledUpdates === false
    ? `Not installed yet, and updates are off (IPINTEL_UPDATE_INTERVAL=off): run "${
      updateCommand(recorded ? recorded.path : options.sourcesFile ?? null)
    }"`
    : 'Not installed yet: the server\'s scheduled update fetches it, or "deno task ipintel data update"';
  const absent = (recorded?.sources ?? options.configured ?? [])
    .filter((s) => !names.has(s.name) && !databaseKinds.has(s.kind))
    .map((s) => ({
      name: s.name,
      kind: s.kind,
      reason: redactUrls(manifest.failures?.[s.name]?.reason ?? "") || notYet,
    }));
  const missing = absent.filter((s) => (DATABASE_KINDS as readonly string[]).includes(s.kind));
  return {
    city,
    asn,
    isp,
    connectionType,
    domain,
    anonymousIp,
    risk,
    location: feeds.location,
    crawlers: feeds.crawler
      ? manifest.sources.filter((e) => e.kind === "crawler").map((e) => ({
        source: entryName(e),
        ...crawlerFacts(e),
        userAgents: Object.freeze([...(e.userAgents ?? [])]),
      }))
      : [],
    feeds: Object.fromEntries(
      FEED_KINDS.flatMap((kind) => feeds[kind] ? [[kind, feeds[kind].content]] : []),
    ),
    manifest,
    history,
    version: dataVersion(manifest, fingerprints),
    installed,
    absent,
    incomplete: missing.length
      ? `not installed yet: ${missing.map((s) => `${s.name} (${s.kind})`).join(", ")}`
      : null,
    files: shared,
    withoutCacheFills: withoutCacheFillsOf(databases),
  };
}

/** A crawler entry's crawler and operator (the list's own name where an older manifest lacks them). */
function crawlerFacts(entry: ManifestEntry): { crawler: string; operator: string } {
  return {
    crawler: entry.crawler ?? entryName(entry),
    operator: entry.operator ?? entryName(entry),
  };
}

/** Runs a scan inside every one of `databases`' withoutCacheFills. */
function withoutCacheFillsOf(
  databases: readonly MmdbDatabase<unknown>[],
): <T>(scan: () => T) => T {
  return <T>(scan: () => T): T => {
    const from = (i: number): T =>
      i === databases.length ? scan() : databases[i]!.withoutCacheFills(() => from(i + 1));
    return from(0);
  };
}

/**
 * Files read and found matching their manifest's sha256, for as long as a data
 * set holds their bytes: a reload after a feed update opens the unchanged City
 * and ASN from the bytes the served set holds, instead of reading and hashing
 * them again on the isolate that serves (and holding a second copy). Made once
 * where data sets are opened again and again (a server's reloads) and passed to
 * each openDataSet. Keyed by shared mode, path and the manifest's sha256, and
 * checked against the file's size and modification time, so a file changed on
 * disk is read and checked again.
 */
export class VerifiedFileCache {
  readonly #held = new Map<string, { stamp: string; bytes: WeakRef<Uint8Array> }>();

  /** The bytes held under `key`, while a data set holds them and the file's stamp is the same. */
  find(key: string, stamp: string): Uint8Array | undefined {
    const held = this.#held.get(key);
    return held?.stamp === stamp ? held.bytes.deref() : undefined;
  }

  /** Keeps `bytes` findable under `key` while a data set holds them. */
  hold(key: string, stamp: string, bytes: Uint8Array): void {
    for (const [k, held] of this.#held) if (!held.bytes.deref()) this.#held.delete(k);
    this.#held.set(key, { stamp, bytes: new WeakRef(bytes) });
  }
}

/** A file's size and modification time (a file changed on disk since is read and checked again). */
async function fileStamp(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    return `${info.size}:${info.mtime?.getTime() ?? "none"}`;
  } catch {
    return null; // reading it will say why
  }
}

/**
 * Reads a file straight into a buffer of its size: a SharedArrayBuffer for the
 * workers (no second copy to wait for the collector), else an ArrayBuffer.
 * Deno.readFile is slower for the large City file, whose reading is a share
 * of every start-up and of each `lookup` command.
 */
async function readWholeFile(path: string, shared: boolean): Promise<Uint8Array> {
  using file = await Deno.open(path);
  const size = (await file.stat()).size;
  const bytes = new Uint8Array(shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size));
  let read = 0;
  while (read < size) {
    const n = await file.read(bytes.subarray(read));
    if (n === null) throw new Error(`${path} ended after ${read} of ${size} bytes`);
    read += n;
  }
  return bytes;
}

/** One feed kind: the union of its compiled trees and AS-number lists. */
async function openFeed(
  entries: ManifestEntry[],
  read: (entry: ManifestEntry) => Promise<Uint8Array>,
  open: (entry: ManifestEntry, bytes: Uint8Array) => MmdbDatabase<FeedRecord>,
  installed: InstalledSource[],
): Promise<FeedMembership & { content: FeedContent }> {
  const trees: MmdbDatabase<FeedRecord>[] = [];
  // Membership walks the tree only: a record (every list and entry) is decoded for `risk`.
  const walks: TreeWalk[] = [];
  const asns = new Map<number, string[]>();
  const seen = new Set<string>();
  for (const entry of entries) {
    const bytes = await read(entry);
    if (!seen.has(entry.file)) {
      seen.add(entry.file);
      if (entry.file.endsWith(".json")) {
        const users = entries.filter((e) => e.file === entry.file).map(entryName);
        for (const [asn, names] of parseAsnMap(bytes, entry.file, users)) asns.set(asn, names);
      } else {
        try {
          const tree = open(entry, bytes);
          trees.push(tree);
          walks.push(createTreeWalk(bytes, tree.metadata));
        } catch (error) {
          throw new Error(`${entry.file}: ${reason(error)}`);
        }
      }
    }
    installed.push(describe(entry, null, entry.count ?? null));
  }
  return {
    content: { trees, asns },
    has(ip, asn) {
      for (const walk of walks) if (walk(ip.bytes) !== 0) return true;
      return asn !== null && asns.has(asn);
    },
    matches(ip, asn) {
      const found: FeedMatch[] = [];
      for (const tree of trees) {
        const record = tree.getBytes(ip.bytes);
        if (record?.matches) found.push(...record.matches);
        else if (record?.source) found.push({ source: record.source, network: null });
      }
      const names = asn === null ? undefined : asns.get(asn);
      for (const source of names ?? []) found.push({ source, network: `AS${asn}` });
      return found;
    },
  };
}

/**
 * A compiled AS-number file: `{"13335": ["list", ...]}`; files compiled before
 * lists were named per AS number are a bare array, credited to every list using it.
 */
function parseAsnMap(bytes: Uint8Array, file: string, users: string[]): Map<number, string[]> {
  const json = JSON.parse(new TextDecoder().decode(bytes));
  const entries: [unknown, unknown][] = Array.isArray(json)
    ? json.map((asn) => [asn, users])
    : typeof json === "object" && json !== null
    ? Object.entries(json).map(([asn, names]) => [Number(asn), names])
    : [];
  const valid = (asn: unknown, names: unknown) =>
    Number.isInteger(asn) && (asn as number) >= 0 && (asn as number) <= 0xffffffff &&
    Array.isArray(names) && names.every((n) => typeof n === "string");
  if (entries.length === 0 || entries.some(([asn, names]) => !valid(asn, names))) {
    throw new Error(`${file}: expected a JSON map of AS numbers to list names`);
  }
  return new Map(entries as [number, string[]][]);
}

async function openOperatorDatabase<T>(
  d: OperatorDatabase,
  cacheSize: number | undefined,
  into: { installed: InstalledSource[]; fingerprints: OperatorFingerprint[] },
  readFile: (path: string) => Promise<Uint8Array>,
  openChecked: <R>(
    path: string,
    bytes: Uint8Array,
    options: { kind?: DatabaseKind; cacheSize?: number },
  ) => { db: MmdbDatabase<R>; networks: number | null },
): Promise<MmdbDatabase<T>> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(d.path);
  } catch (error) {
    throw new Error(`Invalid ${d.variable} "${d.path}": ${reason(error)}`);
  }
  try {
    const { db, networks } = openChecked<T>(d.path, bytes, { kind: d.kind, cacheSize });
    const m = db.metadata;
    into.fingerprints.push({
      variable: d.variable,
      path: d.path,
      size: bytes.length,
      databaseType: m.databaseType,
      buildEpoch: m.buildEpoch.toISOString(),
      nodeCount: m.nodeCount,
    });
    into.installed.push({
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
    source: redactUrl(entry.source),
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
