/**
 * Admission: the pipeline's one door into access control (src/access): who is
 * calling (the key a request carries, or its client address) and whether the
 * request's cost fits the caller's rate limit. Nothing else in src/http calls
 * src/access, so a change of its interface is an edit here only.
 */

import { type AccessControl, assertAllowed, type Caller, type Charge } from "../access/access.ts";
import type { ApiRequest } from "./pipeline.ts";

export interface Admission {
  /** The caller (null when access control is off); throws the 401 for a missing or wrong key. */
  identify(request: ApiRequest): Caller | null;
  /** The caller by a key a compatible API carries its own way (null: none), as `identify`. */
  identifyKey(request: ApiRequest, key: string | null): Caller | null;
  /**
   * Charges `cost` units to the caller and records the decision on the request
   * (its RateLimit headers); throws the 429 when they do not fit. Returns
   * nothing while the count is in memory, a Promise when the shared count must
   * be read first (it rejects with the 429).
   */
  charge(request: ApiRequest, caller: Caller | null, cost: number): void | Promise<void>;
}

/** Admission through `access`; without it, everyone is admitted (as with IPINTEL_AUTH=off). */
export function createAdmission(
  access: AccessControl | undefined,
  clientAddress: (request: ApiRequest) => string,
): Admission {
  if (!access) return { identify: () => null, identifyKey: () => null, charge: () => {} };
  const admit = (request: ApiRequest, caller: Caller | null, cost: number, charge: Charge) => {
    if (charge.kind !== "allowed" && charge.kind !== "refused") return; // unlimited
    request.rate = charge;
    assertAllowed(caller!, charge, cost);
  };
  const identifyKey = (request: ApiRequest, key: string | null) =>
    access.identify(key, () => clientAddress(request));
  return {
    identify: (request) => identifyKey(request, apiKeyOf(request.query("apiKey"), request.headers)),
    identifyKey,
    charge(request, caller, cost) {
      const charge = access.tryCharge(caller, cost);
      if (charge.kind !== "wait") return admit(request, caller, cost, charge);
      return access.charge(caller, cost).then((c) => admit(request, caller, cost, c));
    },
  };
}

/**
 * The API key a request carries: the `apiKey` query parameter (it wins, as the
 * spec names it), else `X-API-Key`, else `Authorization: Bearer`. Null when none.
 */
export function apiKeyOf(queryKey: string | undefined, headers: Headers): string | null {
  if (queryKey !== undefined) return queryKey;
  const header = headers.get("x-api-key");
  if (header !== null) return header.trim();
  const authorization = headers.get("authorization");
  if (authorization === null) return null;
  const match = /^\s*bearer\s+(\S*)\s*$/i.exec(authorization);
  return match ? match[1]! : authorization.trim(); // another scheme: still a key that is wrong
}
