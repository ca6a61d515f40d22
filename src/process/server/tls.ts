/**
 * HTTPS: the certificate and key files (IPINTEL_TLS_CERT / IPINTEL_TLS_KEY),
 * read and checked as a pair, and watched so that a renewed certificate is
 * served without a restart. A bad pair is refused at start (exit status 2
 * naming the files); a bad pair written later is reported and the server
 * keeps the pair it has.
 *
 * "Good" is checked the way a handshake would need it: every PEM block of the
 * certificate file is a certificate that parses (the TLS stack reads them all
 * at each handshake, so one bad block fails every handshake), the first is
 * the key's, and each one is issued by the next. A key file that group or
 * others can read is served, with a warning: it is the operating system's
 * access control that is wrong, and a container's secret mount (0644 by
 * default in Kubernetes) is often the only user there is.
 */

import { createPrivateKey, X509Certificate } from "node:crypto";
import { ConfigError } from "../../base/config.ts";
import type { Config } from "../../base/config.ts";

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
  warn: (line: string) => void = console.error,
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
  const exposed = await exposedMode(tlsKey);
  if (exposed !== null) {
    warn(
      `ipintel: warning: IPINTEL_TLS_KEY "${tlsKey}" can be read by other users (mode ${exposed}); run chmod 600 on it`,
    );
  }
  return pair;
}

/** The file's permission bits as octal text when group or others may read it; else null. */
async function exposedMode(path: string): Promise<string | null> {
  const { mode } = await Deno.stat(path);
  if (mode === null || (mode & 0o044) === 0) return null; // null: Windows has no such bits
  return `0${(mode & 0o777).toString(8)}`;
}

/**
 * Throws a ConfigError naming the file (and the block) unless every block of
 * `pair.cert` is a PEM certificate issued by the next one, and `pair.key` is
 * the first one's private key.
 */
export function checkTlsPair(pair: TlsPair, certPath: string, keyPath: string): void {
  const where = `IPINTEL_TLS_CERT "${certPath}"`;
  const blocks = pemBlocks(pair.cert, where);
  if (blocks.length === 0) {
    throw new ConfigError(`${where} is not a PEM certificate: it holds no PEM block`);
  }
  const chain = blocks.map(({ label, pem }, i) => {
    const which = blocks.length > 1 ? ` (block ${i + 1} of ${blocks.length})` : "";
    if (label !== "CERTIFICATE") {
      throw new ConfigError(`${where} is not a PEM certificate${which}: a ${label} block`);
    }
    try {
      return new X509Certificate(pem);
    } catch (error) {
      throw new ConfigError(
        `${where} is not a PEM certificate${which}: ${(error as Error).message}`,
      );
    }
  });
  for (let i = 1; i < chain.length; i++) {
    const [child, issuer] = [chain[i - 1]!, chain[i]!];
    if (!child.checkIssued(issuer) || !child.verify(issuer.publicKey)) {
      throw new ConfigError(
        `${where}: certificate ${i} (${oneLine(child.subject)}) is not issued by certificate ${
          i + 1
        } (${
          oneLine(issuer.subject)
        }); the chain goes from the server's certificate to its issuers, in order`,
      );
    }
  }
  let key;
  try {
    key = createPrivateKey(pair.key);
  } catch (error) {
    throw new ConfigError(
      `IPINTEL_TLS_KEY "${keyPath}" is not a PEM private key: ${(error as Error).message}`,
    );
  }
  if (!chain[0]!.checkPrivateKey(key)) {
    throw new ConfigError(
      `IPINTEL_TLS_KEY "${keyPath}" is not the private key of the certificate in IPINTEL_TLS_CERT "${certPath}"`,
    );
  }
}

/** The PEM blocks of `text`, in order. Throws on a BEGIN line without its END line. */
function pemBlocks(text: string, where: string): { label: string; pem: string }[] {
  const blocks: { label: string; pem: string }[] = [];
  const pattern = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END ([A-Z0-9 ]+)-----/g;
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== match[2]) {
      throw new ConfigError(
        `${where} is not a PEM certificate: "BEGIN ${match[1]}" ends with "END ${match[2]}"`,
      );
    }
    blocks.push({ label: match[1]!, pem: match[0] });
  }
  const begins = text.split("-----BEGIN ").length - 1;
  if (begins !== blocks.length) {
    throw new ConfigError(
      `${where} is not a PEM certificate: a "-----BEGIN" line has no "-----END" line`,
    );
  }
  return blocks;
}

function oneLine(subject: string): string {
  return subject.replaceAll("\n", ", ");
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
        const pair = await readTlsPair(config, report);
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
