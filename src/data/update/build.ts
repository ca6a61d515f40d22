/** `deno task data`: builds the default data set into a data directory, idempotently. */

import { MmdbWriter } from "../mmdb/writer/writer.ts";
import { VERIFIER_VERSION, verifyMmdb } from "../sources/verify_mmdb.ts";
import { parseAsnCsv } from "./asn_csv.ts";
import { checkAborted, DEFAULT_CAPS, gunzipCapped, type SizeCaps, yieldTo } from "./limits.ts";
import { installLocked, tidyDataDir } from "./install.ts";
import { type DefaultSource, provenance } from "./default_sources.ts";
import {
  entryName,
  installContent,
  type InstalledFrom,
  type Manifest,
  type ManifestEntry,
  readManifest,
  sha256Hex,
} from "../sources/manifest.ts";
import { fetchPackage, type Progress, publishedAt } from "./npm_package.ts";
import type { TarEntry } from "./tar.ts";

export interface BuildOptions {
  dataDir: string;
  registry: string;
  sources: readonly DefaultSource[];
  /** Rebuild even when the installed file is current. */
  force?: boolean;
  progress: Progress;
  fetchFn?: typeof fetch;
  now?: () => Date;
  /** Stops the build (Ctrl-C, SIGTERM) within moments; nothing partial is left behind. */
  signal?: AbortSignal;
  /** Wait for another writer of the data directory (default), or fail naming it. */
  waitForLock?: boolean;
  /** What this writer is, for another writer's "waiting for" line (default "data"). */
  purpose?: string;
  /**
   * The sources file these sources come from: recorded in a manifest that
   * records none (the first build). `data update` records its own, and `data`
   * installs only part of a file, so it never replaces a record.
   */
  installedFrom?: InstalledFrom;
}

export interface BuildReport {
  built: string[];
  upToDate: string[];
}

/**
 * Installs every source whose file is missing, changed, or from another
 * pinned version; a second run with nothing to do only hashes the files and
 * never takes the lock. Each source is fetched, built and checked with no
 * lock, then installed under it (install.ts): the manifest is written after
 * each, so a build stopped part-way keeps what it finished.
 */
export async function buildDefaultData(options: BuildOptions): Promise<BuildReport> {
  const report: BuildReport = { built: [], upToDate: [] };
  await tidyDataDir(options.dataDir, options.purpose ?? "data");
  // Fetched and built at once (one's download overlaps the other's compile: a first start
  // waits for both), installed one after another in the sources' order; none after one failed.
  let turn: Promise<unknown> = Promise.resolve();
  const runs = options.sources.map((source) => turn = buildSource(source, options, turn));
  // Every run ends before this returns (none writes after a failure is reported).
  const results = await Promise.allSettled(runs);
  results.forEach((result, i) => {
    if (result.status === "rejected") throw result.reason;
    report[result.value].push(options.sources[i]!.file);
  });
  const from = options.installedFrom;
  const manifest = from ? await readManifest(options.dataDir) : null;
  if (from && manifest && !manifest.sourcesFile) {
    await installLocked(options.dataDir, {
      purpose: options.purpose ?? "data",
      waitForLock: options.waitForLock,
      onWait: (holder) => options.progress(`waiting for ${holder} to finish`),
      signal: options.signal,
    }, (manifest) => {
      if (manifest.sourcesFile) return Promise.resolve(false);
      manifest.sourcesFile = from;
      return Promise.resolve(true);
    });
  }
  return report;
}

/**
 * One source: kept when its installed file is current (its entry takes the
 * source's name and licence texts), else built. The file gets a
 * content-addressed name and is synced before the manifest (switched by
 * atomic rename) names it; files only the old manifest named go afterwards.
 */
async function buildSource(
  source: DefaultSource,
  options: BuildOptions,
  /** Resolves when the sources before this one are installed; rejects when one failed. */
  turn: Promise<unknown> = Promise.resolve(),
): Promise<"built" | "upToDate"> {
  const { dataDir, progress, signal } = options;
  const now = options.now ?? (() => new Date());
  const name = source.name ?? source.kind;
  const same = (entry: ManifestEntry) => entryName(entry) === name || entry.kind === source.kind;
  const install = async (change: (manifest: Manifest) => Promise<boolean>) => {
    await turn;
    return await installLocked(dataDir, {
      purpose: options.purpose ?? "data",
      waitForLock: options.waitForLock,
      onWait: (holder) => progress(`waiting for ${holder} to finish`),
      signal,
    }, change);
  };

  const current = options.force ? undefined : (await readManifest(dataDir))?.sources.find(same);
  const found = current ? await keepIfCurrent(dataDir, current, source) : null;
  if (found) {
    const { entry, moved } = found;
    // The sources file may have renamed it or changed its licence text: the file
    // stays, the entry takes them (a renamed entry would be dropped as unconfigured).
    const stale = entryName(entry) !== name || entry.license !== source.license ||
      entry.attribution !== source.attribution;
    if (stale || moved) {
      await install(async (manifest) => {
        const at = manifest.sources.findIndex(same);
        // Another writer replaced it meanwhile: its entry stands.
        if (at === -1 || manifest.sources[at]!.sha256 !== entry.sha256) return false;
        const file = moved
          ? (await installContent(dataDir, stemOf(source.file), ".mmdb", moved)).file
          : manifest.sources[at]!.file;
        manifest.sources[at] = {
          ...manifest.sources[at]!,
          file,
          name,
          license: source.license,
          attribution: source.attribution,
        };
        return true;
      });
    }
    return "upToDate";
  }

  checkAborted(signal, `Build of ${source.file}`);
  const started = performance.now();
  const caps = source.caps ?? DEFAULT_CAPS.database;
  const files = await fetchPackage(
    options.registry,
    source.package,
    progress,
    options.fetchFn,
    signal,
    caps,
  );
  const published = await publishedAt(options.registry, source.package, options.fetchFn, signal);
  const bytes = await buildFile(source, files, progress, published, caps, signal);
  checkAborted(signal, `Build of ${source.file}`);
  // Untrusted until checked: structure, every value's encoding, kind and a sample of records.
  let verified;
  try {
    verified = verifyMmdb(bytes, { kind: source.kind, cacheSize: 16 });
  } catch (error) {
    throw new Error(`${provenance(source)} gave no usable database: ${(error as Error).message}`);
  }
  const { metadata } = verified.db;
  let installed = "";
  await install(async (manifest) => {
    checkAborted(signal, `Build of ${source.file}`);
    const { file, sha256 } = await installContent(dataDir, stemOf(source.file), ".mmdb", bytes);
    installed = file;
    const entry: ManifestEntry = {
      name,
      kind: source.kind,
      file,
      sha256,
      source: provenance(source),
      license: source.license,
      attribution: source.attribution,
      built: now().toISOString(),
      databaseType: metadata.databaseType,
      // A MaxMind DB's own build time; a compiled one's is ours, so the package's publication date.
      dataDate: source.build.type === "asn-csv"
        ? published?.toISOString() ?? null
        : metadata.buildEpoch.toISOString(),
      count: verified.networks,
      verifier: VERIFIER_VERSION,
    };
    // Replace in place, so the manifest keeps a stable order across rebuilds.
    const at = manifest.sources.findIndex(same);
    if (at === -1) manifest.sources.push(entry);
    else manifest.sources[at] = entry;
    return true;
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  progress(`installed ${installed} (${(bytes.length / 1e6).toFixed(1)} MB) in ${seconds} s`);
  return "built";
}

/** `GeoLite2-City.mmdb` → `GeoLite2-City`: the stem of the content-addressed name. */
function stemOf(file: string): string {
  return file.replace(/\.mmdb$/, "");
}

/**
 * The entry when its file is the source's and intact (read only: no lock);
 * an entry of an older layout (a fixed file name) comes with its bytes, to
 * move to its content-addressed name. Null when the source must be built.
 */
async function keepIfCurrent(
  dataDir: string,
  entry: ManifestEntry,
  source: DefaultSource,
): Promise<{ entry: ManifestEntry; moved: Uint8Array | null } | null> {
  if (entry.source !== provenance(source) || entry.kind !== source.kind) return null;
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(`${dataDir}/${entry.file}`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  if ((await sha256Hex(bytes)) !== entry.sha256) return null;
  const expected = `${stemOf(source.file)}-${entry.sha256.slice(0, 12)}.mmdb`;
  return { entry, moved: entry.file === expected ? null : bytes };
}

async function buildFile(
  source: DefaultSource,
  files: TarEntry[],
  progress: Progress,
  published: Date | null,
  caps: SizeCaps,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const member = (path: string) => {
    const found = files.find((f) => f.path === path);
    if (!found) throw new Error(`${provenance(source)} has no file "${path}"`);
    return found.bytes;
  };
  const step = source.build;
  switch (step.type) {
    case "gunzip-mmdb":
      progress(`decompressing ${step.member}`);
      return await gunzipCapped(member(step.member), {
        cap: caps.unpacked,
        what: `${provenance(source)}: ${step.member} unpacked`,
        setting: "maxUnpackedMB",
        signal,
      });
    case "copy-mmdb":
      return member(step.member);
    case "asn-csv":
      return await compileAsn(
        step.members.map(member),
        step.databaseType,
        source,
        progress,
        published,
        signal,
      );
  }
}

/**
 * Compiles ASN CSV ranges into an MMDB with the GeoLite2-ASN record layout,
 * yielding every few thousand rows so a stop request ends it at once.
 */
async function compileAsn(
  csvFiles: Uint8Array[],
  databaseType: string,
  source: DefaultSource,
  progress: Progress,
  published: Date | null,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const writer = new MmdbWriter({
    databaseType,
    // The data's date where known, so readers' build_epoch tells its age.
    ...(published ? { buildEpoch: Math.floor(published.getTime() / 1000) } : {}),
    description: { en: `Autonomous systems by address range (${provenance(source)})` },
  });
  const decoder = new TextDecoder();
  let total = 0;
  const started = performance.now();
  const what = `Build of ${source.file}`;
  for (const csv of csvFiles) {
    const text = decoder.decode(csv);
    // In slices of whole lines: between slices, signal handlers run.
    for (let start = 0; start < text.length;) {
      let end = text.indexOf("\n", Math.min(start + 256 * 1024, text.length - 1));
      end = end === -1 ? text.length : end + 1;
      total += parseAsnCsv(text.slice(start, end), (range) => {
        writer.insertRange(range.first, range.last, {
          autonomous_system_number: range.asn,
          autonomous_system_organization: range.organization,
        });
      });
      start = end;
      await yieldTo(signal, what);
    }
    progress(`compiling ASN ranges: ${total} inserted`);
  }
  const bytes = writer.toBytes();
  checkAborted(signal, what);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  progress(`compiled ${total} ASN ranges in ${seconds} s`);
  return bytes;
}
