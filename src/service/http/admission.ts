/**
 * Admission: the app's one door into access control (src/service/keys_limits): who is
 * calling (the key a request carries, or its client address) and whether the
 * request's cost fits the caller's rate limit. Nothing else in src/service/http calls
 * src/service/keys_limits, so a change of its interface is an edit here only.
 */

import {
  type AccessControl,
  type Caller,
  type Charge,
  refusalOf,
} from "../keys_limits/access_control.ts";
import { apiKeyOf } from "../keys_limits/credentials.ts";
import { type RateLimitedError, UnauthorizedError } from "../../base/errors.ts";
import type { AppContext } from "./env.ts";

export interface Admission {
  /** The caller by the key it sent (null: none), or null when access control is off; throws the 401. */
  identify(c: AppContext, key: string | null): Caller | null;
  /**
   * Charges `cost` units to the caller and records the decision in the context
   * (`rate`: its RateLimit headers go on the answer). Returns the 429 to answer
   * when they do not fit, else null; a promise of it only when the decision
   * waits for the shared count (src/service/keys_limits/rate_limiter.ts).
   */
  charge(
    c: AppContext,
    caller: Caller | null,
    cost: number,
  ): RateLimitedError | null | Promise<RateLimitedError | null>;
  /**
   * Refuses (the 429 to answer) a caller with not one unit left, counting
   * nothing: for a door that must read a request before it knows its cost
   * (an MCP batch). Null when admitted; the calls are then charged as they run.
   */
  admit(c: AppContext, caller: Caller | null): RateLimitedError | null;
  /**
   * The caller by the native API's key: `apiKey`, `X-API-Key` or
   * `Authorization: Bearer` (a 401 when the key is wrong, or missing where one
   * is required). Not read while access control is off: no key counts then.
   */
  identifyByKey(c: AppContext): Caller | null;
  /**
   * Identifies the caller again by the native API's key (a long stream does it
   * at every batch): the caller now, or the 401 to end with when the key was
   * revoked or rotated meanwhile.
   */
  recheck(c: AppContext): Caller | null | UnauthorizedError;
}

/** Admission through `access`; without it, everyone is admitted (as with IPINTEL_AUTH=off). */
export function createAdmission(
  access: AccessControl | undefined,
  clientAddress: (c: AppContext) => string,
): Admission {
  if (!access) {
    return {
      identify: () => null,
      identifyByKey: () => null,
      charge: () => null,
      admit: () => null,
      recheck: () => null,
    };
  }
  const decided = (c: AppContext, caller: Caller | null, cost: number, charge: Charge) => {
    if (charge.kind === "unlimited") return null;
    c.set("rate", charge);
    return refusalOf(caller!, charge, cost);
  };
  const identifyByKey = (c: AppContext) =>
    access.mode() === "off" ? null : access.identify(keyOf(c), () => clientAddress(c));
  return {
    identify: (c, key) => access.identify(key, () => clientAddress(c)),
    identifyByKey,
    charge(c, caller, cost) {
      const charge = access.charge(caller, cost);
      return charge instanceof Promise
        ? charge.then((decision) => decided(c, caller, cost, decision))
        : decided(c, caller, cost, charge);
    },
    admit(c, caller) {
      const peek = access.peek(caller);
      if (peek.kind !== "refused") return null;
      c.set("rate", peek); // its RateLimit headers and Retry-After go on the 429
      return refusalOf(caller!, peek, 1);
    },
    recheck(c) {
      try {
        return identifyByKey(c);
      } catch (error) {
        if (error instanceof UnauthorizedError) return error;
        throw error;
      }
    },
  };
}

/** The native API's key of a request (see {@link Admission.identifyByKey}). */
function keyOf(c: AppContext): string | null {
  return apiKeyOf(c.req.query("apiKey"), c.req.raw.headers);
}
