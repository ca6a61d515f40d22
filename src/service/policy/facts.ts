/**
 * What a policy can judge an address by, read once from its lookup: country,
 * continent, AS number and the security tags. The tags follow the `security`
 * rules of src/data/risk/security.ts (the operator's allow-list clears every flag,
 * a relay egress and a verified crawler are not a VPN), so `/auth` and `/ip`
 * never disagree. The crawler tags come from the request's user agent and the
 * crawler verdict (`risk.crawler`).
 */

import type { ParsedIp } from "../../base/ip/parse.ts";
import { anonymizerFlags, type RiskSignals } from "../../data/risk/security.ts";
import type { LookupResult, Risk, ThreatLevel } from "../../base/types.ts";

/** The flags, in the order `X-IP-Risk` lists them. `threat`: on a threat list. */
export const RISK_FLAGS = ["tor", "vpn", "relay", "hosting", "threat"] as const;
export type RiskFlag = typeof RISK_FLAGS[number];

/** The `isThreat` levels, written `threat:<level>` in a policy. */
export const THREAT_LEVELS = ["low", "medium", "high"] as const satisfies readonly ThreatLevel[];

/** The crawler tags: a verified crawler, and a user agent claiming one from outside its ranges. */
export const CRAWLER_TAGS = ["crawler", "fake-crawler"] as const;

/** Every value a `security` condition accepts. */
export const SECURITY_TAGS: readonly string[] = [
  ...RISK_FLAGS,
  ...THREAT_LEVELS.map((level) => `threat:${level}`),
  ...CRAWLER_TAGS,
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
  /**
   * `risk` comma-separated, then the crawler (`crawler:Googlebot`, or
   * `fake-crawler:Googlebot`), as X-IP-Risk says it.
   */
  riskText: string;
  /** `risk.crawler`: the verified crawler, or the fake one the user agent claims; null for none. */
  crawler: Risk["crawler"];
  /** The security tags that hold (flags and the threat level), as TAG_BITS bits. */
  tags: number;
  /** `isThreat`: null when no security source is installed. */
  threat: ThreatLevel | null;
}

/** What the facts are read from: a lookup's result, its security signals and crawler verdict. */
export interface LookupFacts {
  result: LookupResult;
  signals: RiskSignals;
  /** `risk.crawler` of the lookup (absent: none). */
  crawler?: Risk["crawler"];
}

/** The facts of `ip` from its lookup; `looked` null when no database knows it. */
export function factsOf(ip: ParsedIp, looked: LookupFacts | null): AddressFacts {
  if (looked === null) {
    return {
      ip,
      found: false,
      country: null,
      continent: null,
      asn: null,
      risk: [],
      riskText: "",
      crawler: null,
      tags: 0,
      threat: null,
    };
  }
  const { result, signals } = looked;
  const crawler = looked.crawler ?? null;
  const threat = result.security.isThreat;
  let tags = tagBits(signals, threat);
  const risk = riskOf(tags);
  let riskText = risk.text;
  if (crawler !== null) {
    const tag = crawler.verified ? "crawler" : "fake-crawler";
    tags |= TAG_BITS.get(tag)!;
    riskText += `${riskText ? "," : ""}${tag}:${crawler.name}`;
  }
  return {
    ip,
    found: true,
    country: result.geoLocation.countryCode,
    continent: result.geoLocation.continentCode,
    asn: result.connection.asn_number,
    risk: risk.list,
    riskText,
    crawler,
    tags,
    threat,
  };
}

/** One bit per security tag, in SECURITY_TAGS order: a rule's tags and an address's as one number. */
export const TAG_BITS: ReadonlyMap<string, number> = new Map(
  SECURITY_TAGS.map((tag, i) => [tag, 1 << i]),
);
const TOR = TAG_BITS.get("tor")!;
const VPN = TAG_BITS.get("vpn")!;
const RELAY = TAG_BITS.get("relay")!;
const HOSTING = TAG_BITS.get("hosting")!;
const THREAT = TAG_BITS.get("threat")!;
const FLAG_MASK = TOR | VPN | RELAY | HOSTING | THREAT;
const LEVEL_BITS: Readonly<Record<ThreatLevel, number>> = {
  low: TAG_BITS.get("threat:low")!,
  medium: TAG_BITS.get("threat:medium")!,
  high: TAG_BITS.get("threat:high")!,
};

/** The security tags of `signals` and an `isThreat` level, as TAG_BITS bits. */
export function tagBits(signals: RiskSignals, threat: ThreatLevel | null): number {
  // anonymizerFlags applies the allow-list and relay rules, as `security` does.
  const shown = anonymizerFlags(signals);
  let bits = threat === null ? 0 : LEVEL_BITS[threat];
  if (shown.tor) bits |= TOR;
  if (shown.vpn) bits |= VPN;
  if (shown.relay) bits |= RELAY;
  if (shown.hosting) bits |= HOSTING;
  if (signals.allowed !== true && signals.blocklisted === true) bits |= THREAT;
  return bits;
}

// The few possible flag lists and X-IP-Risk texts, shared (a decision should not build one).
const FLAG_LISTS = new Map<number, { list: readonly RiskFlag[]; text: string }>();

/** The flags among `bits`, in RISK_FLAGS order, and their comma-separated text. */
export function riskOf(bits: number): { list: readonly RiskFlag[]; text: string } {
  const flags = bits & FLAG_MASK;
  let found = FLAG_LISTS.get(flags);
  if (!found) {
    const list = Object.freeze(RISK_FLAGS.filter((flag) => (flags & TAG_BITS.get(flag)!) !== 0));
    found = Object.freeze({ list, text: list.join(",") });
    FLAG_LISTS.set(flags, found);
  }
  return found;
}
