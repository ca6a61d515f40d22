/**
 * HTTPS: the certificate and key files (IPINTEL_TLS_CERT / IPINTEL_TLS_KEY),
 * read and checked as a pair, and watched so that a renewed certificate is
 * served without a restart. A bad pair is refused at start (exit status 2
 * naming the files); a bad pair written later is reported and the server
 * keeps the pair it has.
 */

import { createPrivateKey, X509Certificate } from "node:crypto";
import { ConfigError } from "../config.ts";
import type { Config } from "../config.ts";

/** A certificate chain and its private key, PEM text. */
export interface TlsPair {
  cert: string;
  key: string;
}

/** How often the files are checked for a change (their size and modification time). */
export const TLS_POLL_MS = 1000;

/**
 * Reads and checks the configured pair; null when TLS is not configured.
 * Throws a ConfigError when only one file is set, a file cannot be read, it is
 * not PEM of its kind, or the key is not the certificate's.
 */
export async function readTlsPair(
  config: Pick<Config, "tlsCert" | "tlsKey">,
): Promise<TlsPair | null> {
  const { tlsCert, tlsKey } = config;
  if (tlsCert === null && tlsKey === null) return null;
  if (tlsCert === null || tlsKey === null) {
    throw new ConfigError(
      "IPINTEL_TLS_CERT (--tls-cert) and IPINTEL_TLS_KEY (--tls-key) go together: set both to serve HTTPS, or neither",
    );
  }
  const read = async (path: string, variable: string) => {
    try {
      return await Deno.readTextFile(path);
    } catch (error) {
      throw new ConfigError(`Cannot read ${variable} "${path}": ${(error as Error).message}`);
    }
  };
  const pair = {
    cert: await read(tlsCert, "IPINTEL_TLS_CERT"),
    key: await read(tlsKey, "IPINTEL_TLS_KEY"),
  };
  checkTlsPair(pair, tlsCert, tlsKey);
  return pair;
}

/** Throws a ConfigError naming the files unless `pair` is a PEM certificate and its own key. */
export function checkTlsPair(pair: TlsPair, certPath: string, keyPath: string): void {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pair.cert);
  } catch (error) {
    throw new ConfigError(
      `IPINTEL_TLS_CERT "${certPath}" is not a PEM certificate: ${(error as Error).message}`,
    );
  }
  let key;
  try {
    key = createPrivateKey(pair.key);
  } catch (error) {
    throw new ConfigError(
      `IPINTEL_TLS_KEY "${keyPath}" is not a PEM private key: ${(error as Error).message}`,
    );
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new ConfigError(
      `IPINTEL_TLS_KEY "${keyPath}" is not the private key of the certificate in IPINTEL_TLS_CERT "${certPath}"`,
    );
  }
}

/**
 * Checks the files every `intervalMs`; when either changed and the new pair is
 * good, calls `install` with it. A bad or half-written pair is reported once
 * per change and retried at the next check; the served pair stays.
 */
export function watchTlsPair(
  config: Pick<Config, "tlsCert" | "tlsKey">,
  install: (pair: TlsPair) => Promise<void> | void,
  report: (message: string) => void,
  intervalMs = TLS_POLL_MS,
): { close(): void } {
  const paths = [config.tlsCert!, config.tlsKey!];
  const stamp = async () => {
    const stats = await Promise.all(paths.map((path) => Deno.stat(path).catch(() => null)));
    return stats.map((s) => s ? `${s.size}:${s.mtime?.getTime()}:${s.ino}` : "missing").join("|");
  };
  let seen: Promise<string> = stamp();
  let reported = "";
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const now = await stamp();
      if (now === await seen) return;
      try {
        const pair = await readTlsPair(config);
        await install(pair!);
        seen = Promise.resolve(now);
        report(`ipintel: TLS certificate reloaded from ${config.tlsCert}`);
      } catch (error) {
        if (reported !== now) {
          report(`ipintel: TLS files changed but not reloaded: ${(error as Error).message}`);
        }
        reported = now;
      }
    } finally {
      busy = false;
    }
  }, intervalMs);
  return { close: () => clearInterval(timer) };
}
