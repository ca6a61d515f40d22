/**
 * A decision as JSON for a person or an assistant: what `ipintel policy test
 * --json` prints and the MCP `policy_decision` tool answers (one shape, so
 * the two never differ). The facts are the policy's own (country, continent,
 * AS, risk flags, crawler, isThreat), not its internal encoding.
 */

import type { Decision } from "./decide.ts";

/** The JSON of `decision`. */
export function decisionJson(decision: Decision) {
  const { facts } = decision;
  return {
    ip: facts.ip.address,
    action: decision.action,
    rule: decision.rule,
    ruleAction: decision.verdict,
    matched: decision.matched,
    facts: {
      found: facts.found,
      country: facts.country,
      continent: facts.continent,
      asn: facts.asn,
      risk: facts.risk,
      crawler: facts.crawler,
      isThreat: facts.threat,
    },
    headers: decision.headers,
  };
}
