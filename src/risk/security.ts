/** The `security` block: membership in Tor / VPN / threat feeds, and the threat rule. */

import type { ParsedIp } from "../ip/parse.ts";
import type { Security, ThreatLevel } from "../types.ts";

/** What the loaded feeds and anonymity databases say about one address. */
export interface RiskSignals {
  tor: boolean;
  vpn: boolean;
  /** On a threat blocklist. */
  blocklisted: boolean;
  /** In a hosting / data-centre range. */
  hosting: boolean;
}

/** Answers feed membership for an address; the feeds issue supplies real ones. */
export interface RiskSource {
  signals(ip: ParsedIp): RiskSignals;
}

const NO_SIGNALS: RiskSignals = Object.freeze({
  tor: false,
  vpn: false,
  blocklisted: false,
  hosting: false,
});

/** The source used while no feed is installed: every flag false. */
export const NO_FEEDS: RiskSource = { signals: () => NO_SIGNALS };

/**
 * The documented rule: `high` for a Tor exit or a blocklisted address,
 * `medium` for a VPN/anonymous proxy or hosting range, `low` otherwise.
 */
export function threatLevel(s: RiskSignals): ThreatLevel {
  if (s.tor || s.blocklisted) return "high";
  if (s.vpn || s.hosting) return "medium";
  return "low";
}

// The few possible answers, frozen and shared like the other cached parts of a result.
const ANSWERS = new Map<string, Security>();

/** Builds the `security` object of a result from the signals. */
export function assessSecurity(source: RiskSource, ip: ParsedIp): Security {
  const s = source.signals(ip);
  const key = `${s.tor}${s.vpn}${s.blocklisted}${s.hosting}`;
  let answer = ANSWERS.get(key);
  if (!answer) {
    answer = Object.freeze({ isVpn: s.vpn, isTor: s.tor, isThreat: threatLevel(s) });
    ANSWERS.set(key, answer);
  }
  return answer;
}
