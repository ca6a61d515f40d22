/**
 * `ipintel data update`: brings every source of the sources file up to date.
 *
 * Each source is fetched and verified on its own; a source that fails keeps
 * its installed data and the others still update. New files get new names
 * (`<name>-<hash>.<ext>`), and the manifest, rewritten last by atomic rename,
 * is the single switch from the old set to the new one: a server watching it
 * never sees half an update, and an update that dies part-way changes nothing.
 * The run holds the data directory's write lock; the installed set becomes the
 * sources file's (a source removed or renamed leaves the manifest).
 */

import {
  entryName,
  FEED_KINDS,
  type FeedKind,
  installContent,
  type Manifest,
  type ManifestEntry,
  readManifest,
  removeUnnamed,
  writeManifest,
} from "../sources/manifest.ts";
import { redactUrls } from "../sources/redact_url.ts";
import { isFeedKind, npmTarget, type SourceSpec } from "../sources/sources_file.ts";
import { VERIFIER_VERSION, verifyMmdb } from "../sources/verify_mmdb.ts";
import { buildLocked } from "./build.ts";
import { checkAborted, yieldTo } from "./limits.ts";
import { lockDataDir } from "./lock.ts";
import { npmSource, provenance } from "./default_sources.ts";
import { compileFeeds, feedDatabaseType, type NamedFeed } from "./feed_compile.ts";
import { type ParsedFeed, parseFeed } from "./feed_parse.ts";
import { entrySettings, type FetchContext, fetchSource } from "./fetch_source.ts";
import { packageInfo, type Progress } from "./npm_package.ts";

export interface UpdateOptions extends Omit<FetchContext, "dataDir"> {
  dataDir: string;
  sources: readonly SourceSpec[];
  /** npm registry for `npm` sources. */
  registry: string;
  progress: Progress;
  now?: () => Date;
  /** Wait for another writer of the data directory (default), or fail naming it. */
  waitForLock?: boolean;
}

export interface SourceOutcome {
  name: string;
  status: "updated" | "unchanged" | "failed";
  /** What happened, for the progress line (the reason when failed). */
  detail: string;
}

const FEEDS_DIR = "feeds";

/** Updates every source; returns one outcome per source, in the file's order. */
export async function runUpdate(options: UpdateOptions): Promise<SourceOutcome[]> {
  using _lock = await lockDataDir(options.dataDir, {
    purpose: "data update",
    wait: options.waitForLock ?? true,
    onWait: (holder) => options.progress(`waiting for ${holder} to finish`),
    signal: options.signal,
  });
  return await updateLocked(options);
}

async function updateLocked(options: UpdateOptions): Promise<SourceOutcome[]> {
  const { dataDir, progress } = options;
  const now = options.now ?? (() => new Date());
  await Deno.mkdir(`${dataDir}/${FEEDS_DIR}`, { recursive: true });
  const previous = await readManifest(dataDir);
  await removeUnnamed(dataDir, null, previous ?? { sources: [] }); // a killed run's leftovers
  const outcomes = new Map<string, SourceOutcome>();
  const report = (outcome: SourceOutcome) => {
    outcomes.set(outcome.name, outcome);
    progress(`${outcome.name}: ${outcome.status === "failed" ? "FAILED: " : ""}${outcome.detail}`);
  };

  // npm sources first: their builder keeps the manifest itself.
  for (const spec of options.sources.filter((s) => s.format === "npm")) {
    if (options.signal?.aborted) break;
    try {
      report(await updateNpm(spec, options, now));
    } catch (error) {
      report({ name: spec.name, status: "failed", detail: message(error) });
    }
  }

  const manifest: Manifest = (await readManifest(dataDir)) ?? { sources: [] };
  checkAborted(options.signal, "The update");
  const failures = { ...manifest.failures };
  for (const o of outcomes.values()) {
    if (o.status === "failed") failures[o.name] = { reason: o.detail, at: now().toISOString() };
    else delete failures[o.name];
  }
  const dirty = new Set<FeedKind>();
  const fresh = new Map<string, ParsedFeed>();
  const ctx: FetchContext = { ...options, dataDir };

  for (const spec of options.sources.filter((s) => s.format !== "npm")) {
    if (options.signal?.aborted) break;
    const at = manifest.sources.findIndex((e) => entryName(e) === spec.name);
    const previous = at === -1 ? undefined : manifest.sources[at];
    try {
      const fetched = await fetchSource(spec, previous, ctx);
      delete failures[spec.name];
      if (fetched.status === "not-modified") {
        report({ name: spec.name, status: "unchanged", detail: "not modified (HTTP 304)" });
        continue;
      }
      let entry: ManifestEntry;
      if (fetched.status === "database") {
        const { file, sha256 } = await installContent(
          dataDir,
          `${FEEDS_DIR}/${spec.name}`,
          ".mmdb",
          fetched.bytes,
        );
        entry = {
          ...base(spec, now),
          file,
          sha256,
          databaseType: fetched.databaseType,
          dataDate: fetched.buildEpoch.toISOString(),
          count: fetched.networks,
          verifier: VERIFIER_VERSION, // fetchSource ran the checks
          download: {
            file,
            sha256,
            fetched: now().toISOString(),
            ...httpState(fetched),
          },
        };
        report({
          name: spec.name,
          status: "updated",
          detail: `${fetched.databaseType}, ${fetched.networks} networks, built ${
            day(fetched.buildEpoch)
          }`,
        });
      } else {
        const { file: raw, sha256 } = await installContent(
          dataDir,
          `${FEEDS_DIR}/${spec.name}`,
          ".txt",
          fetched.raw,
        );
        const lastModified = Date.parse(fetched.lastModified ?? "");
        // The list's own date, else its server's, else the download's.
        const dataDate = fetched.feed.dataDate ??
          (Number.isNaN(lastModified) ? now() : new Date(lastModified));
        entry = {
          ...base(spec, now),
          file: "", // set when the kind is compiled
          sha256: "",
          databaseType: feedDatabaseType(spec.kind as FeedKind),
          dataDate: dataDate?.toISOString() ?? null,
          count: fetched.feed.count,
          download: { file: raw, sha256, fetched: now().toISOString(), ...httpState(fetched) },
        };
        fresh.set(spec.name, fetched.feed);
        dirty.add(spec.kind as FeedKind);
        report({
          name: spec.name,
          status: "updated",
          detail: `${fetched.feed.count} entries${dataDate ? `, dated ${day(dataDate)}` : ""}`,
        });
      }
      // A list whose kind changed leaves its old kind's tree: that one is compiled again too.
      const replaced = at === -1 ? null : manifest.sources[at]!;
      if (replaced && replaced.kind !== entry.kind && isFeedKind(replaced.kind)) {
        dirty.add(replaced.kind);
      }
      if (at === -1) manifest.sources.push(entry);
      else manifest.sources[at] = entry;
    } catch (error) {
      failures[spec.name] = { reason: message(error), at: now().toISOString() };
      report({ name: spec.name, status: "failed", detail: message(error) });
    }
  }

  // Sources no longer in the sources file leave the manifest (a database of an older
  // manifest without names stands for the configured source of its kind).
  const configured = new Set(options.sources.map((s) => s.name));
  const configuredKinds = new Set(options.sources.map((s) => s.kind));
  manifest.sources = manifest.sources.filter((e) => {
    const keep = e.name === undefined && !isFeedKind(e.kind)
      ? configuredKinds.has(e.kind)
      : configured.has(entryName(e));
    if (!keep) {
      progress(`${entryName(e)}: removed (no longer in the sources file)`);
      if (isFeedKind(e.kind)) dirty.add(e.kind);
    }
    return keep;
  });
  for (const name of Object.keys(failures)) if (!configured.has(name)) delete failures[name];

  for (const kind of FEED_KINDS) {
    if (!dirty.has(kind)) continue;
    checkAborted(options.signal, "The update");
    try {
      await compileKind(kind, manifest, fresh, dataDir, options.signal);
    } catch (error) {
      throw new Error(`Compiling the ${kind} feeds failed: ${message(error)}`);
    }
  }
  manifest.failures = failures;
  if (Object.keys(failures).length === 0) delete manifest.failures;
  checkAborted(options.signal, "The update");
  await writeManifest(dataDir, manifest);
  await removeUnnamed(dataDir, previous, manifest);
  return options.sources.map((s) => outcomes.get(s.name)!).filter(Boolean);
}

/** An npm source: newest version when unpinned (integrity from the registry), built if changed. */
async function updateNpm(
  spec: SourceSpec,
  options: UpdateOptions,
  now: () => Date,
): Promise<SourceOutcome> {
  const target = npmTarget(spec.url);
  let version = target.version;
  let integrity = spec.integrity;
  if (!version || !integrity) {
    const info = await packageInfo(options.registry, target.name, options.fetchFn, options.signal);
    version ??= info["dist-tags"]?.latest ?? null;
    if (!version) throw new Error(`The registry names no latest version of ${target.name}`);
    integrity = info.versions?.[version]?.dist?.integrity;
    if (!integrity?.startsWith("sha512-")) {
      throw new Error(`The registry gives no sha512 integrity for ${target.name}@${version}`);
    }
  }
  const source = npmSource(spec, { name: target.name, version, integrity });
  const result = await buildLocked({
    dataDir: options.dataDir,
    registry: options.registry,
    sources: [source],
    progress: (line) => options.progress(`${spec.name}: ${line}`),
    fetchFn: options.fetchFn,
    now,
    signal: options.signal,
  });
  return result.built.length
    ? { name: spec.name, status: "updated", detail: `installed ${provenance(source)}` }
    : { name: spec.name, status: "unchanged", detail: `${provenance(source)} is current` };
}

/** Compiles every installed list of a kind into its tree and AS-number set; sets entries' files. */
async function compileKind(
  kind: FeedKind,
  manifest: Manifest,
  fresh: Map<string, ParsedFeed>,
  dataDir: string,
  signal?: AbortSignal,
): Promise<void> {
  const entries = manifest.sources.filter((e) => e.kind === kind && e.download);
  const feeds: NamedFeed[] = [];
  for (const entry of entries) {
    const name = entryName(entry);
    let feed = fresh.get(name);
    if (!feed) {
      const format = entry.format ?? "ip-list";
      const text = await Deno.readTextFile(`${dataDir}/${entry.download!.file}`);
      feed = parseFeed(format, text, name, entry);
    }
    feeds.push({ name, feed });
    await yieldTo(signal, `Compiling the ${kind} feeds`);
  }
  const compiled = compileFeeds(kind, feeds);
  await yieldTo(signal, `Compiling the ${kind} feeds`);
  const install = async (bytes: Uint8Array | null, suffix: ".mmdb" | ".asns.json") =>
    bytes ? await installContent(dataDir, `${FEEDS_DIR}/${kind}`, suffix, bytes) : null;
  if (compiled.tree) checkTree(compiled.tree, feeds);
  const tree = await install(compiled.tree, ".mmdb");
  const asns = await install(compiled.asns, ".asns.json");
  for (const [i, entry] of entries.entries()) {
    const feed = feeds[i]!.feed;
    const target = feed.asns.length ? asns! : tree!;
    entry.file = target.file;
    entry.sha256 = target.sha256;
    // checkTree ran verifyMmdb on the tree: the server need not walk it again.
    if (target === tree) entry.verifier = VERIFIER_VERSION;
  }
}

/** The compiled tree must open, pass the MMDB checks, and find the first entry of each list. */
function checkTree(bytes: Uint8Array, feeds: NamedFeed[]): void {
  const { db } = verifyMmdb(bytes, { cacheSize: 16 });
  for (const { name, feed } of feeds) {
    const first = feed.networks[0]?.split("/")[0] ?? feed.ranges[0]?.[0];
    if (first && db.get(first) === null) {
      throw new Error(`the compiled tree does not find ${first} of ${name}`);
    }
  }
}

function base(spec: SourceSpec, now: () => Date) {
  return { name: spec.name, ...entrySettings(spec), built: now().toISOString() };
}

function httpState(f: { etag?: string; lastModified?: string }) {
  return {
    ...(f.etag ? { etag: f.etag } : {}),
    ...(f.lastModified ? { lastModified: f.lastModified } : {}),
  };
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** An error's message, with the secrets of any URL in it redacted (it goes to /status and logs). */
function message(error: unknown): string {
  return redactUrls(error instanceof Error ? error.message : String(error));
}
