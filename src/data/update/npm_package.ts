/** Downloads a pinned npm package tarball and verifies it against its registry integrity. */

import { redactUrl, redactUrls } from "../sources/redact_url.ts";
import { DEFAULT_CAPS, gunzipCapped, readCapped, type SizeCaps } from "./limits.ts";
import { readTar, type TarEntry } from "./tar.ts";

/** A package pinned by version and by the registry's `dist.integrity` (sha512). */
export interface PinnedPackage {
  name: string;
  version: string;
  integrity: string;
}

export type Progress = (message: string) => void;

/** The tarball address npm itself uses: `<registry>/<name>/-/<basename>-<version>.tgz`. */
function tarballUrl(registry: string, pkg: PinnedPackage): string {
  const basename = pkg.name.split("/").pop()!;
  return `${registry.replace(/\/+$/, "")}/${pkg.name}/-/${basename}-${pkg.version}.tgz`;
}

/**
 * Fetches the package, checks its sha512 integrity, and returns the files of
 * the tarball. Any mismatch or HTTP failure throws naming the package; a
 * tarball past its caps (downloaded or unpacked) is refused while it streams.
 */
export async function fetchPackage(
  registry: string,
  pkg: PinnedPackage,
  progress: Progress,
  fetchFn: typeof fetch = fetch,
  signal?: AbortSignal,
  caps: SizeCaps = DEFAULT_CAPS.database,
): Promise<TarEntry[]> {
  const url = tarballUrl(registry, pkg);
  const label = `${pkg.name}@${pkg.version}`;
  // Where the registry comes from, so a failure says what to change.
  const hint = `(npm registry ${redactUrl(registry)}, set by IPINTEL_NPM_REGISTRY)`;
  const shown = redactUrl(url); // a private registry's URL may carry credentials
  let response: Response;
  try {
    response = await fetchFn(url, { signal });
  } catch (error) {
    if (signal?.aborted) throw new Error(`Download of ${label} was cancelled`);
    const cause = (error as Error).cause;
    const why = cause instanceof Error ? `: ${cause.message}` : "";
    throw new Error(
      redactUrls(
        `Download of ${label} from ${shown} failed: ${(error as Error).message}${why} ${hint}`,
      ),
    );
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`Download of ${label} failed: HTTP ${response.status} from ${shown} ${hint}`);
  }
  const total = Number(response.headers.get("content-length") ?? 0);
  let compressed: Uint8Array;
  let lastReport = 0;
  try {
    compressed = await readCapped(response.body, {
      cap: caps.download,
      what: `the download of ${label}`,
      setting: "maxDownloadMB",
      signal,
      onChunk: (got) => {
        if (got - lastReport < 5e6) return;
        lastReport = got;
        const share = total ? ` (${Math.floor((got / total) * 100)}%)` : "";
        progress(`downloading ${label}: ${(got / 1e6).toFixed(1)} MB${share}`);
      },
    });
  } catch (error) {
    if (signal?.aborted) throw new Error(`Download of ${label} was cancelled`);
    if ((error as Error).name === "CapExceededError") throw error;
    throw new Error(
      redactUrls(`Download of ${label} from ${shown} failed: ${(error as Error).message} ${hint}`),
    );
  }
  await verifyIntegrity(compressed, pkg.integrity, label);
  const archive = await gunzipCapped(compressed, {
    cap: caps.unpacked,
    what: `the package ${label} unpacked`,
    setting: "maxUnpackedMB",
    signal,
  });
  return readTar(archive);
}

/**
 * When the registry says the version was published (the packument's `time`);
 * null when it cannot tell. The date of a package's data, not of our build.
 */
export async function publishedAt(
  registry: string,
  pkg: Pick<PinnedPackage, "name" | "version">,
  fetchFn: typeof fetch = fetch,
  signal?: AbortSignal,
): Promise<Date | null> {
  try {
    const info = await packageInfo(registry, pkg.name, fetchFn, signal);
    const time = Date.parse(info.time?.[pkg.version] ?? "");
    return Number.isNaN(time) ? null : new Date(time);
  } catch {
    return null; // the date is informative; the build does not depend on it
  }
}

/** What we read of a package's registry document. */
export interface PackageInfo {
  "dist-tags"?: { latest?: string };
  versions?: Record<string, { dist?: { integrity?: string } }>;
  time?: Record<string, string>;
}

/** Fetches a package's registry document (`<registry>/<name>`). */
export async function packageInfo(
  registry: string,
  name: string,
  fetchFn: typeof fetch = fetch,
  signal?: AbortSignal,
): Promise<PackageInfo> {
  const url = `${registry.replace(/\/+$/, "")}/${name.replace("/", "%2F")}`;
  const response = await fetchFn(url, { signal });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(
      `Package lookup of ${name} failed: HTTP ${response.status} from ${redactUrl(url)}`,
    );
  }
  const body = await readCapped(response.body, {
    cap: DEFAULT_CAPS.feed.download,
    what: `the registry document of ${name}`,
    setting: "maxDownloadMB",
    signal,
  });
  return JSON.parse(new TextDecoder().decode(body)) as PackageInfo;
}

/** Decompresses gzip data (the tests' reader of archives; updates use gunzipCapped). */
export async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  return await gunzipCapped(bytes, {
    cap: DEFAULT_CAPS.database.unpacked,
    what: "gzip data",
    setting: "maxUnpackedMB",
  });
}

async function verifyIntegrity(bytes: Uint8Array, integrity: string, label: string) {
  const [algorithm, expected] = integrity.split("-", 2);
  if (algorithm !== "sha512" || !expected) {
    throw new Error(`Unsupported integrity "${integrity}" for ${label}: expected sha512-<base64>`);
  }
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-512", bytes as Uint8Array<ArrayBuffer>),
  );
  const actual = btoa(String.fromCharCode(...digest));
  if (actual !== expected) {
    throw new Error(
      `Integrity check failed for ${label}: the download does not match ${integrity}`,
    );
  }
}
