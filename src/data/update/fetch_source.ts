/**
 * Fetches one non-npm source and checks it: the download (conditional,
 * with timeout and retries) or the local file (unless unchanged), its checksum, then for databases the MaxMind DB
 * checks and for lists the strict parser and the shrink guard.
 */

import { verifyMmdb } from "../sources/verify_mmdb.ts";
import type { DatabaseKind, ManifestEntry } from "../sources/manifest.ts";
import { sha256Hex } from "../sources/manifest.ts";
import { isFileUrl, type SourceSpec } from "../sources/sources_file.ts";
import { redactUrl } from "../sources/redact_url.ts";
import { download, type DownloadOptions } from "./download.ts";
import { type ParsedFeed, parseFeed } from "./feed_parse.ts";
import { capsOf, checkAborted, gunzipCapped, type SizeCaps } from "./limits.ts";
import { localPath, type LocalState, readLocalSource, readLocalText } from "./local_source.ts";
import { readTar } from "./tar.ts";

export interface FetchContext {
  dataDir: string;
  fetchFn?: typeof fetch;
  timeoutMs: number;
  attempts?: number;
  backoffMs?: number;
  /** MaxMind account id and licence key, sent (basic auth) only to maxmind.com. */
  maxmind?: { accountId: string; licenseKey: string } | null;
  signal?: AbortSignal;
  /** Hosts found unreachable in this update (see DownloadOptions.unreachable). */
  unreachable?: Map<string, string>;
}

/** How the source was got: an HTTP validator pair, or a local file's size, time and hash. */
interface Origin {
  etag?: string;
  lastModified?: string;
  local?: LocalState;
}

/** A fetched source, checked and ready to install. */
export type Fetched =
  /** `local`: a local file with the same bytes but a new time (to record). */
  | { status: "not-modified"; local?: LocalState }
  | ({
    status: "database";
    bytes: Uint8Array;
    databaseType: string;
    buildEpoch: Date;
    networks: number;
  } & Origin)
  | ({
    status: "feed";
    /** The list as downloaded, to keep. */
    raw: Uint8Array;
    feed: ParsedFeed;
  } & Origin);

/** Fetches and verifies a source; `previous` is its installed entry (conditional request, shrink guard). */
export async function fetchSource(
  spec: SourceSpec,
  previous: ManifestEntry | undefined,
  ctx: FetchContext,
): Promise<Fetched> {
  const rawExists = previous?.download
    ? await exists(`${ctx.dataDir}/${previous.download.file}`)
    : false;
  const caps = capsOf(spec);
  // Only "if changed" when what we have is still on disk and was made with these
  // settings: an unchanged source keeps the entry, whose kind or provider may be stale.
  const conditional = rawExists && previous !== undefined && madeFrom(previous, spec);
  const got = isFileUrl(spec.url)
    ? await readLocal(spec, caps, conditional ? previous?.download?.local : undefined)
    : await fetchRemote(spec, caps, conditional ? previous : undefined, ctx);
  if (got.status === "not-modified") return got;
  const { bytes, origin } = got;
  await checkChecksum(spec, bytes, ctx);
  checkAborted(ctx.signal, `Update of ${spec.name}`);

  if (spec.format === "mmdb" || spec.format === "mmdb.gz" || spec.format === "tar.gz") {
    const mmdb = await extractMmdb(spec, bytes, caps, ctx.signal);
    checkAborted(ctx.signal, `Update of ${spec.name}`);
    const { db, networks } = verifyMmdb(mmdb, { kind: spec.kind as DatabaseKind, cacheSize: 16 });
    return {
      status: "database",
      bytes: mmdb,
      databaseType: db.metadata.databaseType,
      buildEpoch: db.metadata.buildEpoch,
      networks,
      ...origin,
    };
  }

  const feed = parseFeed(
    spec.format,
    new TextDecoder("utf-8", { fatal: false }).decode(bytes),
    spec.name,
    spec,
  );
  if (feed.count === 0) throw new Error("Refused: the list is empty");
  const before = previous?.count ?? 0;
  if (before > 0 && feed.count < before / 2) {
    throw new Error(
      `Refused: the list shrank from ${before} to ${feed.count} entries (by more than half)`,
    );
  }
  return { status: "feed", raw: bytes, feed, ...origin };
}

type Got = { status: "not-modified"; local?: LocalState } | {
  status: "ok";
  bytes: Uint8Array;
  origin: Origin;
};

/** A source on this machine: its bytes, unless its size and time (or its hash) are unchanged. */
async function readLocal(spec: SourceSpec, caps: SizeCaps, known?: LocalState): Promise<Got> {
  const read = await readLocalSource(spec.url, { maxBytes: caps.download, known });
  if (read.status === "not-modified") {
    return { status: "not-modified", ...(read.state ? { local: read.state } : {}) };
  }
  return {
    status: "ok",
    bytes: read.bytes,
    origin: {
      local: read.state,
      ...(read.lastModified ? { lastModified: read.lastModified } : {}),
    },
  };
}

/** A download (conditional on `previous`'s validators when given). */
async function fetchRemote(
  spec: SourceSpec,
  caps: SizeCaps,
  previous: ManifestEntry | undefined,
  ctx: FetchContext,
): Promise<Got> {
  const options: DownloadOptions = {
    maxBytes: caps.download,
    fetchFn: ctx.fetchFn,
    timeoutMs: ctx.timeoutMs,
    attempts: ctx.attempts,
    backoffMs: ctx.backoffMs,
    signal: ctx.signal,
    unreachable: ctx.unreachable,
    headers: authHeaders(spec, ctx),
    ...(previous
      ? { etag: previous.download?.etag, lastModified: previous.download?.lastModified }
      : {}),
  };
  const result = await download(spec.url, options);
  if (result.status === "not-modified") return result;
  return {
    status: "ok",
    bytes: result.bytes,
    origin: {
      ...(result.etag ? { etag: result.etag } : {}),
      ...(result.lastModified ? { lastModified: result.lastModified } : {}),
    },
  };
}

async function checkChecksum(spec: SourceSpec, bytes: Uint8Array, ctx: FetchContext) {
  let expected = spec.sha256;
  if (!expected && spec.sha256Url && isFileUrl(spec.sha256Url)) {
    const text = await readLocalText(spec.sha256Url);
    expected = /^[0-9a-f]{64}\b/i.exec(text.trim())?.[0]?.toLowerCase();
    if (!expected) throw new Error(`No SHA-256 in ${localPath(spec.sha256Url)}`);
  } else if (!expected && spec.sha256Url) {
    const response = await (ctx.fetchFn ?? fetch)(spec.sha256Url, {
      headers: authHeaders({ ...spec, url: spec.sha256Url }, ctx),
      signal: AbortSignal.any([
        AbortSignal.timeout(ctx.timeoutMs),
        ...(ctx.signal ? [ctx.signal] : []),
      ]),
    });
    const text = response.ok ? await response.text() : (await response.body?.cancel(), "");
    if (!response.ok) {
      throw new Error(
        `Checksum download failed: HTTP ${response.status} from ${redactUrl(spec.sha256Url)}`,
      );
    }
    expected = /^[0-9a-f]{64}\b/i.exec(text.trim())?.[0]?.toLowerCase();
    if (!expected) throw new Error(`No SHA-256 in ${redactUrl(spec.sha256Url)}`);
  }
  if (!expected) return;
  const actual = await sha256Hex(bytes);
  if (actual !== expected) {
    throw new Error(`Checksum mismatch: the download's sha256 is ${actual}, expected ${expected}`);
  }
}

async function extractMmdb(
  spec: SourceSpec,
  bytes: Uint8Array,
  caps: SizeCaps,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  if (spec.format === "mmdb") return bytes;
  let plain: Uint8Array;
  try {
    plain = await gunzipCapped(bytes, {
      cap: caps.unpacked,
      what: "the download unpacked",
      setting: "maxUnpackedMB",
      signal,
    });
  } catch (error) {
    if ((error as Error).name === "CapExceededError" || signal?.aborted) throw error;
    throw new Error(`Not a gzip file: ${(error as Error).message}`);
  }
  if (spec.format === "mmdb.gz") return plain;
  const databases = readTar(plain).filter((e) => e.path.endsWith(".mmdb"));
  if (databases.length !== 1) {
    throw new Error(`Expected one .mmdb file in the archive, found ${databases.length}`);
  }
  return databases[0]!.bytes;
}

function authHeaders(spec: SourceSpec, ctx: FetchContext): Record<string, string> {
  if (!ctx.maxmind) return {};
  const host = new URL(spec.url).hostname;
  if (host !== "maxmind.com" && !host.endsWith(".maxmind.com")) return {};
  const { accountId, licenseKey } = ctx.maxmind;
  return { authorization: `Basic ${btoa(`${accountId}:${licenseKey}`)}` };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** What a manifest entry records of the sources file's settings for a source. */
export function entrySettings(spec: SourceSpec) {
  return {
    kind: spec.kind,
    format: spec.format,
    source: redactUrl(spec.url),
    license: spec.license,
    attribution: spec.attribution,
    ...(spec.provider ? { provider: spec.provider } : {}),
    ...(spec.minCount !== undefined ? { minCount: spec.minCount } : {}),
    ...(spec.operator ? { operator: spec.operator } : {}),
    ...(spec.crawler ? { crawler: spec.crawler } : {}),
    ...(spec.userAgents ? { userAgents: spec.userAgents } : {}),
  };
}

/** Whether a manifest entry was made from this source with these settings. */
function madeFrom(entry: ManifestEntry, spec: SourceSpec): boolean {
  const settings: Record<string, unknown> = entrySettings(spec);
  const recorded = entry as unknown as Record<string, unknown>;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return [
    "kind",
    "format",
    "source",
    "license",
    "attribution",
    "provider",
    "minCount",
    "operator",
    "crawler",
    "userAgents",
  ].every((key) => same(recorded[key], settings[key]));
}
