/**
 * The `security` block: membership in the installed Tor / VPN / hosting / threat
 * feeds and the Anonymous-IP database, and the threat rule. Each flag is
 * three-valued: `null` when no source for it is installed, `false` when one
 * is and says no.
 */

import type { ParsedIp } from "../ip/parse.ts";
import type { AnonymousIpRecord } from "../sources/records.ts";
import type { Security, ThreatLevel } from "../types.ts";
import { sharedPart } from "../shared_part.ts";

/** What the loaded sources say about one address; `null` = no source installed. */
export interface RiskSignals {
  tor: boolean | null;
  vpn: boolean | null;
  /** On a threat blocklist. */
  blocklisted: boolean | null;
  /** In a hosting / data-centre range. */
  hosting: boolean | null;
}

/** Answers feed membership for an address (its AS number helps ASN-based lists). */
export interface RiskSource {
  signals(ip: ParsedIp, asn: number | null): RiskSignals;
}

/** One installed feed kind: a compiled network tree and/or a set of AS numbers. */
export interface FeedMembership {
  /** True when the address is covered by the feed. */
  has(ip: ParsedIp, asn: number | null): boolean;
}

/** The loaded security sources; null where none is installed. */
export interface RiskSources {
  tor: FeedMembership | null;
  vpn: FeedMembership | null;
  hosting: FeedMembership | null;
  threat: FeedMembership | null;
  anonymousIp: { getBytes(address: Uint8Array): AnonymousIpRecord | null } | null;
}

const UNKNOWN: RiskSignals = Object.freeze({
  tor: null,
  vpn: null,
  blocklisted: null,
  hosting: null,
});

/** The source used while no security source is installed: every flag unknown. */
export const NO_FEEDS: RiskSource = { signals: () => UNKNOWN };

/**
 * Combines the feeds and the Anonymous-IP database:
 * - `tor`: the Tor list, or Anonymous-IP `is_tor_exit_node`;
 * - `vpn`: the VPN lists, or Anonymous-IP `is_anonymous_vpn`, `is_public_proxy`, `is_residential_proxy`;
 * - `hosting`: the hosting lists, or Anonymous-IP `is_hosting_provider`;
 * - `blocklisted`: the threat lists.
 */
export function createRiskSource(sources: RiskSources): RiskSource {
  const { tor, vpn, hosting, threat, anonymousIp } = sources;
  if (!tor && !vpn && !hosting && !threat && !anonymousIp) return NO_FEEDS;
  const anon = anonymousIp !== null;
  return {
    signals(ip, asn) {
      const a = anonymousIp?.getBytes(ip.bytes) ?? null;
      return {
        tor: either(tor, ip, asn, anon, a?.is_tor_exit_node === true),
        vpn: either(
          vpn,
          ip,
          asn,
          anon,
          a !== null &&
            (a.is_anonymous_vpn === true || a.is_public_proxy === true ||
              a.is_residential_proxy === true),
        ),
        hosting: either(hosting, ip, asn, anon, a?.is_hosting_provider === true),
        blocklisted: threat ? threat.has(ip, asn) : null,
      };
    },
  };
}

function either(
  feed: FeedMembership | null,
  ip: ParsedIp,
  asn: number | null,
  anonLoaded: boolean,
  anonSays: boolean,
): boolean | null {
  if (!feed && !anonLoaded) return null;
  return anonSays || (feed !== null && feed.has(ip, asn));
}

/**
 * The documented rule: `high` for a Tor exit or a blocklisted address,
 * `medium` for a VPN/anonymous proxy or hosting range, `low` when the
 * installed sources flag none of these, `null` when no source is installed.
 */
export function threatLevel(s: RiskSignals): ThreatLevel | null {
  if (s.tor || s.blocklisted) return "high";
  if (s.vpn || s.hosting) return "medium";
  if (s.tor === null && s.vpn === null && s.blocklisted === null && s.hosting === null) {
    return null;
  }
  return "low";
}

// The few possible answers (3^4), frozen and shared like the other cached parts of a result.
const ANSWERS = new Map<string, Security>();

/** Builds the `security` object of a result from the signals. */
export function assessSecurity(source: RiskSource, ip: ParsedIp, asn: number | null): Security {
  const s = source.signals(ip, asn);
  const key = `${s.tor}${s.vpn}${s.blocklisted}${s.hosting}`;
  let answer = ANSWERS.get(key);
  if (!answer) {
    answer = sharedPart({ isVpn: s.vpn, isTor: s.tor, isThreat: threatLevel(s) });
    ANSWERS.set(key, answer);
  }
  return answer;
}
