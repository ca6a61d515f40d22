/**
 * Rules that cannot match with the data installed: a `security` condition
 * whose list is not installed answers null, so `"security": ["tor"]` with no
 * Tor list would silently let every Tor exit through. Said at start-up and by
 * `ipintel policy`, never an error (the data may arrive with the next update).
 */

import { parseIp } from "../../base/ip/parse.ts";
import type { RiskSignals, RiskSource } from "../../data/risk/security.ts";
import type { Policy } from "./policy.ts";

/** Which signal answers each tag (threat levels need any source at all). */
const SIGNAL_OF: Record<string, keyof RiskSignals | "any"> = {
  tor: "tor",
  vpn: "vpn",
  relay: "relay",
  hosting: "hosting",
  threat: "blocklisted",
  crawler: "crawler",
  "fake-crawler": "crawler",
};

// Any address will do: a signal is null exactly when no source of its kind is installed.
const PROBE = parseIp("192.0.2.1");

/** One line per rule tag that no installed source can answer. */
export function policyWarnings(policy: Policy, risk: RiskSource): string[] {
  const signals = risk.signals(PROBE, null);
  const known = (tag: string): boolean => {
    const signal = SIGNAL_OF[tag] ?? "any";
    if (signal !== "any") return (signals[signal] ?? null) !== null;
    return Object.values(SIGNAL_OF).some((s) => s !== "any" && (signals[s] ?? null) !== null);
  };
  const warnings: string[] = [];
  for (const rule of policy.rules) {
    const unknown = (rule.security ?? []).filter((tag) => !known(tag));
    if (unknown.length === 0) continue;
    const never = unknown.length === rule.security!.length;
    warnings.push(
      `rule ${JSON.stringify(rule.name)}: no installed source answers security ${
        unknown.join(", ")
      }, so ${never ? "the rule never matches" : "those values never match"} ` +
        `(install one: ipintel data update; see /status)`,
    );
  }
  return warnings;
}
