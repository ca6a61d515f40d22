/**
 * A polite download: to a temporary file, with an inactivity timeout,
 * conditional requests (ETag / Last-Modified), and a few retries with
 * back-off, never after 401, 403 or 429 (a publisher that refuses or rations
 * us must not be hammered: MaxMind counts every attempt against a daily quota).
 */

import { redactUrl, redactUrls } from "../sources/redact_url.ts";
import { CapExceededError } from "./limits.ts";
import { sleep } from "../sleep.ts";

export interface DownloadOptions {
  fetchFn?: typeof fetch;
  /** Give up when no response or no body bytes arrive for this long. */
  timeoutMs: number;
  /** Attempts in all (default 3). */
  attempts?: number;
  /** First back-off; doubles after each failed attempt (default 1000). */
  backoffMs?: number;
  headers?: Record<string, string>;
  /** From the previous download, to ask "only if changed". */
  etag?: string;
  lastModified?: string;
  /** Where the temporary file goes (the data directory, so a rename stays on one disk). */
  tempPath: string;
  /** Refuse the body past this many bytes (counted as it streams to disk). */
  maxBytes: number;
  signal?: AbortSignal;
}

export type DownloadResult =
  | { status: "not-modified" }
  | {
    status: "ok";
    /** The temporary file; the caller installs or removes it. */
    path: string;
    size: number;
    etag?: string;
    lastModified?: string;
  };

/** An HTTP answer that is not a success; `retry` says whether trying again can help. */
class HttpError extends Error {
  constructor(readonly status: number, url: string) {
    super(`HTTP ${status}${statusHint(status)} from ${url}`);
  }
  get retry(): boolean {
    return this.status >= 500 || this.status === 408;
  }
}

function statusHint(status: number): string {
  if (status === 401 || status === 403) return " (not authorised: check the credentials)";
  if (status === 429) return " (rate limited by the publisher: not retried)";
  if (status === 404) return " (not found)";
  return "";
}

/**
 * Downloads `url`; throws an error naming the URL (its secrets redacted) and
 * what went wrong. A body past `maxBytes` is refused and never retried.
 */
export async function download(url: string, options: DownloadOptions): Promise<DownloadResult> {
  const attempts = options.attempts ?? 3;
  let backoff = options.backoffMs ?? 1000;
  for (let attempt = 1;; attempt++) {
    try {
      return await attemptDownload(url, options);
    } catch (error) {
      const retry = attempt < attempts && !options.signal?.aborted &&
        !(error instanceof CapExceededError) && !(error instanceof TooSlowError) &&
        (!(error instanceof HttpError) || error.retry);
      if (!retry) {
        throw attempt > 1
          ? new Error(`${(error as Error).message} (after ${attempt} attempts)`)
          : error;
      }
      await sleep(backoff, options.signal);
      backoff *= 2;
    }
  }
}

/** Bytes per second a download must average once it has run longer than its idle timeout. */
const MIN_RATE = 1024;

/** A download slower than MIN_RATE: not retried (the next run tries again). */
class TooSlowError extends Error {}

async function attemptDownload(url: string, options: DownloadOptions): Promise<DownloadResult> {
  const shown = redactUrl(url);
  const fetchFn = options.fetchFn ?? fetch;
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs);
  };
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort);
  const headers: Record<string, string> = { ...options.headers };
  if (options.etag) headers["if-none-match"] = options.etag;
  if (options.lastModified) headers["if-modified-since"] = options.lastModified;
  let file: Deno.FsFile | null = null;
  try {
    arm();
    const response = await fetchFn(url, { headers, signal: controller.signal });
    if (response.status === 304) {
      await response.body?.cancel();
      return { status: "not-modified" };
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new HttpError(response.status, shown);
    }
    const expected = response.headers.get("content-length");
    file = await Deno.open(options.tempPath, { write: true, create: true, truncate: true });
    let size = 0;
    const started = performance.now();
    if (expected !== null && Number(expected) > options.maxBytes) {
      throw new CapExceededError(
        `the download (Content-Length ${expected})`,
        options.maxBytes,
        "maxDownloadMB",
      );
    }
    for await (const chunk of response.body) {
      arm();
      size += chunk.length;
      if (size > options.maxBytes) {
        throw new CapExceededError("the download", options.maxBytes, "maxDownloadMB");
      }
      // A trickle resets the idle timeout for ever, holding the update and the data
      // directory's lock: past the timeout, the download must average MIN_RATE.
      const seconds = (performance.now() - started) / 1000;
      if (seconds * 1000 > options.timeoutMs && size < MIN_RATE * seconds) {
        throw new TooSlowError(
          `Download from ${shown} abandoned: ${size} bytes in ${
            seconds.toFixed(1)
          } s, under 1 KB/s`,
        );
      }
      await writeAll(file, chunk);
    }
    if (expected !== null && Number(expected) !== size) {
      throw new Error(`Truncated download from ${shown}: ${size} of ${expected} bytes`);
    }
    return {
      status: "ok",
      path: options.tempPath,
      size,
      ...optional("etag", response.headers.get("etag")),
      ...optional("lastModified", response.headers.get("last-modified")),
    };
  } catch (error) {
    await Deno.remove(options.tempPath).catch(() => {});
    if (options.signal?.aborted) throw new Error(`Download of ${shown} was cancelled`);
    if (timedOut) {
      throw new Error(
        `Download from ${shown} timed out: nothing received for ${options.timeoutMs} ms`,
      );
    }
    if (
      error instanceof HttpError || error instanceof CapExceededError ||
      error instanceof TooSlowError ||
      (error as Error).message.startsWith("Truncated")
    ) throw error;
    // fetch() says only "fetch failed"; the cause says why (DNS, refused, TLS).
    const cause = (error as Error).cause;
    const why = cause instanceof Error ? `: ${cause.message}` : "";
    throw new Error(redactUrls(`Download from ${shown} failed: ${(error as Error).message}${why}`));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    file?.close();
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

function optional<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value ? { [key]: value } : {}) as { [P in K]?: string };
}
