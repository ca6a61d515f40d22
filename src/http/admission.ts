/**
 * Admission: the app's one door into access control (src/access): who is
 * calling (the key a request carries, or its client address) and whether the
 * request's cost fits the caller's rate limit. Nothing else in src/http calls
 * src/access, so a change of its interface is an edit here only.
 */

import { type AccessControl, type Caller, type Charge, refusalOf } from "../access/access.ts";
import { apiKeyOf } from "../access/credentials.ts";
import { type RateLimitedError, UnauthorizedError } from "../errors.ts";
import type { AppContext } from "./env.ts";

export interface Admission {
  /** The caller by the key it sent (null: none), or null when access control is off; throws the 401. */
  identify(c: AppContext, key: string | null): Caller | null;
  /**
   * Charges `cost` units to the caller and records the decision in the context
   * (`rate`: its RateLimit headers go on the answer). Returns the 429 to answer
   * when they do not fit, else null.
   */
  charge(c: AppContext, caller: Caller | null, cost: number): Promise<RateLimitedError | null>;
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
    return { identify: () => null, charge: () => Promise.resolve(null), recheck: () => null };
  }
  const decided = (c: AppContext, caller: Caller | null, cost: number, charge: Charge) => {
    if (charge.kind === "unlimited") return null;
    c.set("rate", charge);
    return refusalOf(caller!, charge, cost);
  };
  return {
    identify: (c, key) => access.identify(key, () => clientAddress(c)),
    charge: async (c, caller, cost) => decided(c, caller, cost, await access.charge(caller, cost)),
    recheck(c) {
      try {
        return access.identify(keyOf(c), () => clientAddress(c));
      } catch (error) {
        if (error instanceof UnauthorizedError) return error;
        throw error;
      }
    },
  };
}

/**
 * Identifies the caller by the native API's key: `apiKey`, `X-API-Key` or
 * `Authorization: Bearer` (a 401 when the key is wrong, or missing where one
 * is required), and hands it on as `caller`.
 */
export function identifyByKey(admission: Admission, c: AppContext): void {
  c.set("caller", admission.identify(c, keyOf(c)));
}

/** The native API's key of a request (see {@link identifyByKey}). */
function keyOf(c: AppContext): string | null {
  return apiKeyOf(c.req.query("apiKey"), c.req.raw.headers);
}
