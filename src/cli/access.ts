/** Wires access control for the server: key table, rate limiter and policy over one KV. */

import { AccessControl, type AuthMode } from "../access/access.ts";
import { KeyTable } from "../access/key_table.ts";
import { RateLimiter } from "../access/rate_limiter.ts";
import { type Config, ConfigError } from "../config.ts";
import { KvKeyStore } from "../store/keys.ts";
import { KvRateCounters } from "../store/rate_counts.ts";

/** How often servers look for key changes and share their counts (see the README's bound). */
const KEY_POLL_MS = 1000;
const RATE_SYNC_MS = 250;

export interface ServerAccess {
  access: AccessControl;
  /** Writes pending counts and stops the background work (the KV stays open). */
  close(): Promise<void>;
}

/**
 * Loads the keys, starts polling and syncing; errors in the background go to
 * `logError`. With `announce`, says when the first key turns auth on (one
 * isolate of a server with workers does).
 */
export async function startAccess(
  kv: Deno.Kv,
  config: Pick<Config, "auth" | "rateLimit" | "rateWindow" | "anonRateLimit">,
  logError: (error: unknown) => void,
  announce = true,
): Promise<ServerAccess> {
  const keys = new KeyTable(new KvKeyStore(kv));
  await keys.refresh();
  const limiter = new RateLimiter({ counters: new KvRateCounters(kv), onSyncError: logError });
  limiter.start(RATE_SYNC_MS);
  const access = new AccessControl(config, keys, limiter);
  let mode = access.mode();
  keys.start(KEY_POLL_MS, logError, () => {
    // With IPINTEL_AUTH unset, the first key created turns auth on: say so.
    if (access.mode() !== mode && announce) console.error(`ipintel: auth now ${access.mode()}`);
    mode = access.mode();
  });
  return {
    access,
    close: async () => {
      keys.stop();
      await limiter.close();
    },
  };
}

/**
 * Refuses to serve an open API to the network by default: with IPINTEL_AUTH
 * unset and no key yet, auth resolves to off, which a fresh volume or a
 * moved data directory brings about silently. Off on a non-loopback address
 * has to be asked for (IPINTEL_AUTH=off); exit status 2 otherwise.
 */
export function assertNotOpenByDefault(
  access: AccessControl,
  config: Pick<Config, "auth" | "host">,
): void {
  if (config.auth !== "auto" || access.mode() !== "off" || isLoopback(config.host)) return;
  throw new ConfigError(
    `Refusing to serve ${config.host} without API keys: no key exists yet, so anyone who can reach this address could use the API. Create one with "deno task ipintel keys create --name NAME" (auth then becomes required), or set IPINTEL_AUTH=off (--auth off) to serve an open API on purpose`,
  );
}

/** The start-up line about access control, and a warning when an open API faces the network. */
export function describeAccess(
  access: AccessControl,
  config: Pick<Config, "auth" | "host" | "rateLimit" | "rateWindow" | "anonRateLimit">,
): string[] {
  const mode: AuthMode = access.mode();
  const keyed = `keys: ${rate(config.rateLimit, config.rateWindow)}`;
  const keyless = `keyless: ${rate(config.anonRateLimit, config.rateWindow)}`;
  if (mode === "required") return [`ipintel: auth required (${keyed})`];
  if (mode === "optional") return [`ipintel: auth optional (${keyed}; ${keyless})`];
  const lines = [
    config.auth === "auto"
      ? 'ipintel: auth off (no API keys yet; create one with "deno task ipintel keys create --name NAME" and auth becomes required)'
      : "ipintel: auth off (IPINTEL_AUTH=off): no keys checked, no rate limits",
  ];
  if (!isLoopback(config.host)) {
    lines.push(
      `ipintel: WARNING: listening on ${config.host} with auth off: anyone who can reach this address can use the API without a key or a limit; set IPINTEL_AUTH=required or HOST=127.0.0.1`,
    );
  }
  return lines;
}

function rate(limit: number, window: number): string {
  return limit === 0 ? "unlimited" : `${limit} requests per ${window} s`;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || host.startsWith("127.");
}
