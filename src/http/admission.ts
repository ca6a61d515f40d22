/**
 * Admission: the app's one door into access control (src/access): who is
 * calling (the key a request carries, or its client address) and whether the
 * request's cost fits the caller's rate limit. Nothing else in src/http calls
 * src/access, so a change of its interface is an edit here only.
 */

import type { MiddlewareHandler } from "hono";
import { type AccessControl, type Caller, type Charge, refusalOf } from "../access/access.ts";
import { apiKeyOf } from "../access/credentials.ts";
import type { RateLimitedError } from "../errors.ts";
import type { AppContext, AppEnv } from "./env.ts";

export interface Admission {
  /** The caller by the key it sent (null: none), or null when access control is off; throws the 401. */
  identify(c: AppContext, key: string | null): Caller | null;
  /**
   * Charges `cost` units to the caller and records the decision in the context
   * (`rate`: its RateLimit headers go on the answer). Returns the 429 to answer
   * when they do not fit, else null.
   */
  charge(c: AppContext, caller: Caller | null, cost: number): Promise<RateLimitedError | null>;
}

/** Admission through `access`; without it, everyone is admitted (as with IPINTEL_AUTH=off). */
export function createAdmission(
  access: AccessControl | undefined,
  clientAddress: (c: AppContext) => string,
): Admission {
  if (!access) return { identify: () => null, charge: () => Promise.resolve(null) };
  const decided = (c: AppContext, caller: Caller | null, cost: number, charge: Charge) => {
    if (charge.kind === "unlimited") return null;
    c.set("rate", charge);
    return refusalOf(caller!, charge, cost);
  };
  return {
    identify: (c, key) => access.identify(key, () => clientAddress(c)),
    charge: async (c, caller, cost) => decided(c, caller, cost, await access.charge(caller, cost)),
  };
}

/**
 * The key middleware of the native API's lookup routes: identifies the caller
 * by `apiKey`, `X-API-Key` or `Authorization: Bearer` (401 when the key is
 * wrong, or missing where one is required) and hands it on as `caller`.
 */
export function requireKey(admission: Admission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    identifyByKey(admission, c);
    await next();
  };
}

/** Identifies the caller by the native API's key (see {@link requireKey}) and hands it on. */
export function identifyByKey(admission: Admission, c: AppContext): void {
  c.set("caller", admission.identify(c, apiKeyOf(c.req.query("apiKey"), c.req.raw.headers)));
}
