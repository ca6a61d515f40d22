/**
 * Access control, the one rule every lookup path applies: who is calling
 * (an API key, or an anonymous client address) and whether the request fits
 * the caller's rate limit. No HTTP here: the app's admission (src/service/http/admission.ts)
 * calls it on every route that answers a lookup.
 */

import { RateLimitedError, UnauthorizedError } from "../../base/errors.ts";
import { parseIp } from "../../base/ip/parse.ts";
import type { KeyTable } from "./key_table.ts";
import type { RateDecision, RateLimiter, RegionName } from "./rate_limiter.ts";

/** `auto`: `required` once any key exists, `off` while none does. */
export type AuthSetting = "required" | "optional" | "off" | "auto";
export type AuthMode = Exclude<AuthSetting, "auto">;

export interface AccessPolicy {
  auth: AuthSetting;
  /** Requests per window for a key without its own limit; 0 = unlimited. */
  rateLimit: number;
  /** Window in seconds for a key without its own window, and for anonymous callers. */
  rateWindow: number;
  /** Requests per window for each keyless client (IPv6 per /64) in `optional` mode; 0 = unlimited. */
  anonRateLimit: number;
}

/**
 * What charging a caller gives: `unlimited` (no caller, or a limit of 0: no
 * RateLimit headers), or a decision (`allowed` or `refused`, with what the
 * headers say).
 */
export type Charge = RateDecision | { readonly kind: "unlimited" };

const UNLIMITED = Object.freeze({ kind: "unlimited" } as const);

/**
 * A flood from one IPv6 prefix is grouped coarsely: once FLOOD_56 distinct /64s
 * of one /56 were seen in a window, that /56 is one caller; once FLOOD_48 of one
 * /48, that /48 is. The tallies are this server's (src/service/keys_limits/rate_table.ts).
 */
export const FLOOD_56 = 16;
export const FLOOD_48 = 64;

/** Whose budget a request is charged to. */
export interface Caller {
  /** `key:<id>` or `ip:<address or /64>`; never the key itself. */
  id: string;
  /** What the refusal message calls the caller. */
  label: string;
  limit: number;
  window: number;
  /** Which part of the rate table holds its counts. */
  region: RegionName;
}

const UNAUTHORIZED_MESSAGE =
  "Invalid or missing API key: send a valid key in the X-API-Key header, as Authorization: Bearer, or in the apiKey query parameter";

export class AccessControl {
  private readonly keyCallers = new WeakMap<object, Caller>();

  constructor(
    private readonly policy: AccessPolicy,
    private readonly keys: KeyTable,
    private readonly limiter: RateLimiter,
  ) {}

  /** The mode in force now (with `auto`, it follows the key table). */
  mode(): AuthMode {
    if (this.policy.auth !== "auto") return this.policy.auth;
    return this.keys.everUsed ? "required" : "off";
  }

  /**
   * The caller of a request, from the key it sent (null: none) and its client
   * address (asked only for keyless callers). Null when access control is off.
   * A key that is sent must be valid in every mode but `off`.
   */
  identify(key: string | null, clientAddress: () => string): Caller | null {
    const mode = this.mode();
    if (mode === "off") return null;
    if (key !== null) {
      const record = this.keys.find(key);
      if (!record) throw new UnauthorizedError(UNAUTHORIZED_MESSAGE);
      // One caller per key record (a new table brings new records), not one per request.
      let caller = this.keyCallers.get(record);
      if (caller === undefined) {
        caller = Object.freeze({
          id: keyCallerId(record.id),
          label: "this API key",
          limit: record.limit ?? this.policy.rateLimit,
          window: record.window ?? this.policy.rateWindow,
          region: "key",
        });
        this.keyCallers.set(record, caller);
      }
      return caller;
    }
    if (mode === "required") throw new UnauthorizedError(UNAUTHORIZED_MESSAGE);
    return {
      id: `ip:${this.anonymousCaller(clientAddress())}`,
      label: "keyless callers from your address",
      limit: this.policy.anonRateLimit,
      window: this.policy.rateWindow,
      region: "anonymous",
    };
  }

  /**
   * Charges `cost` units: decided at once from this server's counts when they
   * can decide (no promise: the common case), else after reading the shared
   * count. A bulk or a stream charges each part as it goes: every call is
   * admitted whole or refused whole.
   */
  charge(caller: Caller | null, cost: number): Charge | Promise<Charge> {
    if (!caller || caller.limit === 0) return UNLIMITED;
    const { id, limit, window, region } = caller;
    return this.limiter.tryConsume(id, limit, window, cost, region) ??
      this.limiter.consume(id, limit, window, cost, region);
  }

  /**
   * Whether one unit would fit now, counting nothing (see RateLimiter.peek):
   * a door that reads a request before it knows its cost refuses a spent
   * caller first. `unlimited` when no limit applies or nothing is counted yet.
   */
  peek(caller: Caller | null): Charge {
    if (!caller || caller.limit === 0) return UNLIMITED;
    return this.limiter.peek(caller.id, caller.limit, caller.window, 1, caller.region) ??
      UNLIMITED;
  }

  /** The bucket of a keyless client: its address, its /64, or a coarser prefix that floods. */
  private anonymousCaller(address: string): string {
    const bucket = anonymousBucket(address);
    if (!bucket.endsWith("::/64")) return bucket;
    const window = this.policy.rateWindow;
    const groups = bucket.slice(0, -5).split(":");
    const p48 = `${groups.slice(0, 3).join(":")}::/48`;
    if (this.limiter.usage(`new64:${p48}`, window) >= FLOOD_48) return p48;
    const third = parseInt(groups[3]!, 16) & 0xff00;
    const p56 = `${groups.slice(0, 3).join(":")}:${third.toString(16)}::/56`;
    if (this.limiter.usage(`new64:${p56}`, window) >= FLOOD_56) return p56;
    if (!this.limiter.has(`ip:${bucket}`, window)) {
      this.limiter.tally(`new64:${p56}`, window);
      this.limiter.tally(`new64:${p48}`, window);
    }
    return bucket;
  }
}

/** The caller id of an API key: its counts are kept under it (never the key itself). */
export function keyCallerId(keyId: string): string {
  return `key:${keyId}`;
}

/** The 429 of a refused decision (null when allowed); its message says when to retry, or why never. */
export function refusalOf(
  caller: Caller,
  decision: RateDecision,
  cost: number,
): RateLimitedError | null {
  if (decision.kind === "allowed") return null;
  const rate = `${caller.limit} requests per ${caller.window} s`;
  if (!Number.isFinite(decision.retryAfterSeconds)) {
    return new RateLimitedError(
      `Request costs ${cost} units, more than the rate limit of ${rate} allows: send at most ${caller.limit} addresses at once`,
      caller.window,
    );
  }
  return new RateLimitedError(
    `Rate limit exceeded: ${rate} for ${caller.label}; retry in ${decision.retryAfterSeconds} s`,
    decision.retryAfterSeconds,
  );
}

/** IPv4 addresses count one by one; IPv6 per /64, the block one subscriber usually holds. */
export function anonymousBucket(address: string): string {
  let ip;
  try {
    ip = parseIp(address);
  } catch {
    return address; // the transport's own peer text; still one bucket per peer
  }
  if (ip.version === 4) return ip.address;
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) {
    groups.push(((ip.bytes[i]! << 8) | ip.bytes[i + 1]!).toString(16));
  }
  return `${groups.join(":")}::/64`;
}
