/** Wires access control for the server: key table, rate limiter and policy over one KV. */

import { AccessControl, type AuthMode } from "../../service/keys_limits/access_control.ts";
import { KeyTable } from "../../service/keys_limits/key_table.ts";
import { RateLimiter } from "../../service/keys_limits/rate_limiter.ts";
import { RateTable } from "../../service/keys_limits/rate_table.ts";
import { type Config, ConfigError } from "../../base/config.ts";
import type { ReadinessCheck } from "../../service/ops/readiness.ts";
import { throttledLog } from "../../service/ops/throttled_log.ts";
import { KvKeyStore, recordServerDefaults } from "../../data/store/keys.ts";
import { KvRateCounters } from "../../data/store/rate_counts.ts";
import { BusyRetry } from "../../data/store/busy.ts";
import { kvLocation } from "./kv.ts";

/** How often servers look for key changes and share their counts (see the README's bound). */
const KEY_POLL_MS = 1000;
const RATE_SYNC_MS = 250;
/** `/ready` fails when the rate counts have not reached the KV for this long (README, Readiness). */
export const RATE_SYNC_MAX_AGE_MS = 5000;

export interface ServerAccess {
  access: AccessControl;
  /** Not ready while the rate counts do not reach the KV. */
  readiness: ReadinessCheck;
  /** Writes pending counts and stops the background work (the KV stays open). */
  close(): Promise<void>;
}

/**
 * Loads the keys, starts polling and syncing. Failures in the background are
 * logged once per interval with a count. `table` is the server's shared rate
 * table (every isolate of a server passes the same buffer). With `announce`,
 * says when the first key turns auth on and records the server's default
 * limit and window in the KV for `keys list` (one isolate of a server with
 * workers does).
 */
export async function startAccess(
  kv: Deno.Kv,
  config: Pick<Config, "auth" | "kv" | "dataDir" | "rateLimit" | "rateWindow" | "anonRateLimit">,
  announce = true,
  table?: SharedArrayBuffer,
): Promise<ServerAccess> {
  // `keys` commands and other servers write to the same KV: every call waits out a busy one.
  const busy = new BusyRetry({ location: kvLocation(config) });
  const keys = new KeyTable(new KvKeyStore(kv, undefined, busy));
  await keys.refresh();
  if (announce) {
    const defaults = { limit: config.rateLimit, window: config.rateWindow };
    await recordServerDefaults(kv, defaults, new Date(), busy);
  }
  const syncLog = throttledLog("writing rate counts to the KV");
  const limiter = new RateLimiter({
    counters: new KvRateCounters(kv, busy),
    table: table && new RateTable(table),
    onSyncError: syncLog.failure,
    onSyncSuccess: syncLog.success,
    // An in-memory KV is the isolate's own: only the main isolate (it announces) holds the counts.
    syncs: announce || config.kv !== ":memory:",
  });
  limiter.start(RATE_SYNC_MS);
  const access = new AccessControl(config, keys, limiter);
  let mode = access.mode();
  const keyLog = throttledLog("reading API keys from the KV");
  keys.start(KEY_POLL_MS, keyLog.failure, () => {
    // With IPINTEL_AUTH unset, the first key created turns auth on: say so.
    if (access.mode() !== mode && announce) console.error(`ipintel: auth now ${access.mode()}`);
    mode = access.mode();
  }, keyLog.success);
  const readiness: ReadinessCheck = {
    name: "Deno KV",
    check: () => {
      const problem = config.auth === "off" ? null : limiter.syncProblem(RATE_SYNC_MAX_AGE_MS);
      return problem === null ? Promise.resolve() : Promise.reject(new Error(problem));
    },
  };
  return {
    access,
    readiness,
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
