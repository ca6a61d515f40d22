/**
 * What a policy can judge an address by, read once from its lookup: country,
 * continent, AS number and the security tags. The tags follow the `security`
 * rules of src/risk/security.ts (the operator's allow-list clears every flag,
 * a relay egress is not a VPN), so `/auth` and `/ip` never disagree.
 */

import type { ParsedIp } from "../ip/parse.ts";
import { anonymizerFlags, type RiskSignals } from "../risk/security.ts";
import type { LookupResult, ThreatLevel } from "../types.ts";

/** The flags, in the order `X-IP-Risk` lists them. `threat`: on a threat list. */
export const RISK_FLAGS = ["tor", "vpn", "relay", "hosting", "threat"] as const;
export type RiskFlag = typeof RISK_FLAGS[number];

/** The `isThreat` levels, written `threat:<level>` in a policy. */
export const THREAT_LEVELS = ["low", "medium", "high"] as const satisfies readonly ThreatLevel[];

/** Every value a `security` condition accepts. */
export const SECURITY_TAGS: readonly string[] = [
  ...RISK_FLAGS,
  ...THREAT_LEVELS.map((level) => `threat:${level}`),
];

/** One address as a policy sees it; null where the data does not say. */
export interface AddressFacts {
  ip: ParsedIp;
  /** False when no installed database knows the address (a private range, say): only `cidr` can match. */
  found: boolean;
  country: string | null;
  continent: string | null;
  asn: number | null;
  /** The flags that hold, in RISK_FLAGS order. */
  risk: readonly RiskFlag[];
  /** `isThreat`: null when no security source is installed. */
  threat: ThreatLevel | null;
}

/** What the facts are read from: a lookup's result and its data set's security signals. */
export interface LookupFacts {
  result: LookupResult;
  signals: RiskSignals;
}

/** The facts of `ip` from its lookup; `looked` null when no database knows it. */
export function factsOf(ip: ParsedIp, looked: LookupFacts | null): AddressFacts {
  if (looked === null) {
    return { ip, found: false, country: null, continent: null, asn: null, risk: [], threat: null };
  }
  const { result, signals } = looked;
  return {
    ip,
    found: true,
    country: result.geoLocation.countryCode,
    continent: result.geoLocation.continentCode,
    asn: result.connection.asn_number,
    risk: riskFlags(signals),
    threat: result.security.isThreat,
  };
}

// The few possible lists, shared (a decision per request should not build one).
const FLAG_LISTS = new Map<number, readonly RiskFlag[]>();

/** The flags that hold for `signals`, after the allow-list and relay rules. */
export function riskFlags(signals: RiskSignals): readonly RiskFlag[] {
  const shown = anonymizerFlags(signals);
  const held = {
    ...shown,
    threat: signals.allowed !== true && signals.blocklisted === true,
  };
  let bits = 0;
  RISK_FLAGS.forEach((flag, i) => {
    if (held[flag]) bits |= 1 << i;
  });
  let list = FLAG_LISTS.get(bits);
  if (!list) {
    list = Object.freeze(RISK_FLAGS.filter((_, i) => (bits & (1 << i)) !== 0));
    FLAG_LISTS.set(bits, list);
  }
  return list;
}
