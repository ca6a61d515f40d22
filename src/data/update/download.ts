/**
 * A polite download: into memory (bounded by the source's cap), with an
 * inactivity timeout, conditional requests (ETag / Last-Modified), and a few
 * retries with back-off, never after 401, 403 or 429 (a publisher that refuses
 * or rations us must not be hammered: MaxMind counts every attempt against a
 * daily quota), and never to a host that does not resolve or refuses the
 * connection (a closed network: trying again within seconds cannot help, and
 * the next scheduled update tries again). Nothing is written to disk here, so
 * a download needs no lock on the data directory.
 */

import { redactUrl, redactUrls } from "../sources/redact_url.ts";
import { CapExceededError } from "./limits.ts";
import { sleep } from "../../base/sleep.ts";

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
  /** Refuse the body past this many bytes (counted as it arrives). */
  maxBytes: number;
  signal?: AbortSignal;
  /**
   * Hosts found unreachable earlier in the same update (host → why): a
   * download from one fails at once, so sixteen feeds on a closed network
   * cost one failed lookup per host, not sixteen timeouts.
   */
  unreachable?: Map<string, string>;
}

export type DownloadResult =
  | { status: "not-modified" }
  | {
    status: "ok";
    bytes: Uint8Array;
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

/** The host does not resolve, refuses connections or cannot be routed to: not retried. */
export class UnreachableError extends Error {
  override name = "UnreachableError";
}

/**
 * Downloads `url`; throws an error naming the URL (its secrets redacted) and
 * what went wrong. A body past `maxBytes` is refused and never retried.
 */
export async function download(url: string, options: DownloadOptions): Promise<DownloadResult> {
  const attempts = options.attempts ?? 3;
  let backoff = options.backoffMs ?? 1000;
  const host = hostOf(url);
  const known = options.unreachable?.get(host);
  if (known) {
    throw new UnreachableError(`Download from ${redactUrl(url)} not tried: ${known}`);
  }
  for (let attempt = 1;; attempt++) {
    try {
      return await attemptDownload(url, options);
    } catch (error) {
      if (error instanceof UnreachableError) {
        options.unreachable?.set(host, unreachableReason(error));
        throw error;
      }
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

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** What the sources that follow on the same host say: "<host> does not resolve (seen …)". */
function unreachableReason(error: UnreachableError): string {
  return error.message.replace(/^Download from \S+ failed: /, "").replace(/ \(.*\)$/, "") +
    " (seen earlier in this update)";
}

/**
 * Why a connection could not be made, when trying again within seconds cannot
 * help: the name does not resolve, the host refuses or cannot be reached.
 * Null for anything else (a reset, TLS, a timeout): those are retried.
 */
export function unreachableCause(message: string, host: string): string | null {
  if (
    /dns error|failed to lookup address|name or service not known|nodename nor servname|no such host|temporary failure in name resolution/i
      .test(message)
  ) {
    return `${host} does not resolve (no DNS answer: a closed network, or a mistyped host)`;
  }
  if (/connection refused|os error 111|ECONNREFUSED/i.test(message)) {
    return `${host} refused the connection`;
  }
  if (
    /network is unreachable|no route to host|os error 101|os error 113|ENETUNREACH|EHOSTUNREACH/i
      .test(message)
  ) {
    return `${host} cannot be reached (no route: a closed network)`;
  }
  if (/requests to port \d+ are blocked/i.test(message)) {
    return `${host}: ${message.replace(/^Fetch failed: /i, "")}`;
  }
  return null;
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
    const chunks: Uint8Array[] = [];
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
      chunks.push(chunk);
    }
    if (expected !== null && Number(expected) !== size) {
      throw new Error(`Truncated download from ${shown}: ${size} of ${expected} bytes`);
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    return {
      status: "ok",
      bytes,
      ...optional("etag", response.headers.get("etag")),
      ...optional("lastModified", response.headers.get("last-modified")),
    };
  } catch (error) {
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
    const unreachable = unreachableCause(`${(error as Error).message}${why}`, hostOf(url));
    if (unreachable) throw new UnreachableError(`Download from ${shown} failed: ${unreachable}`);
    throw new Error(redactUrls(`Download from ${shown} failed: ${(error as Error).message}${why}`));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function optional<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value ? { [key]: value } : {}) as { [P in K]?: string };
}
