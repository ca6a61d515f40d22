/**
 * The gate's judgement: an address's facts against the policy, first matching
 * rule wins. The decision carries the headers a reverse proxy copies, and
 * authAnswer() turns it into the forward-auth answer (204 allow, 403 deny).
 */

import { NotFoundError } from "../../base/errors.ts";
import { cidrContains } from "../../base/ip/cidr.ts";
import { parseIp } from "../../base/ip/parse.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import type { RiskSource } from "../../data/risk/security.ts";
import { type AddressFacts, factsOf, TAG_BITS } from "./facts.ts";
import type { ConditionName, Policy, PolicyRule, RuleAction } from "./policy.ts";

/** One condition of the deciding rule and the value of the address that met it. */
export interface MatchedFact {
  condition: ConditionName;
  /** The policy's value that matched: the CIDR as written, `US`, `15169`, `tor`. */
  value: string;
}

export interface Decision {
  /** What the proxy does: `report` allows. */
  action: "allow" | "deny";
  /** The deciding rule's name, or `default`. */
  rule: string;
  /** What the deciding rule (or the default) says; what is counted. */
  verdict: RuleAction;
  /** The deciding rule's conditions and what met them; empty for the default. */
  matched: readonly MatchedFact[];
  facts: AddressFacts;
  /** For the proxy to copy: X-IP-Country, X-IP-ASN, X-IP-Risk, X-IP-Policy-Rule, ... */
  headers: Record<string, string>;
}

/** Judges `facts` by `policy`. */
export function decide(policy: Policy, facts: AddressFacts): Decision {
  for (const rule of policy.rules) {
    const matched = matchRule(rule, facts);
    if (matched) return decision(policy, rule.name, rule.action, matched, facts);
  }
  return decision(policy, "default", policy.default, [], facts);
}

/** What a decision reads: the served lookup and the security sources of its data set. */
export interface DecisionData {
  lookup: Lookup;
  data: { readonly risk: RiskSource };
}

/**
 * Judges an address, as a request with `userAgent` makes it: looks it up and
 * decides. An address no database knows (a private range) is still judged:
 * its `cidr` rules and the default apply. Throws InvalidIpError for text that
 * is not an address, and whatever else the lookup throws (a corrupt record).
 *
 * The plain lookup (its cached parts), not `lookup.detail` (which also finds
 * the matched network: twice the work), plus the security signals the
 * `security` object folds away (hosting, relay, a threat listing) and the
 * crawler verdict; the crawler's name is looked up only for a crawler, real or fake.
 */
export function judge(
  served: DecisionData,
  policy: Policy,
  address: string,
  userAgent: string | null = null,
): Decision {
  const ip = parseIp(address);
  let facts;
  try {
    const result = served.lookup.find(ip.address, { userAgent });
    const asn = result.connection.asn_number;
    let signals = served.data.risk.signals(ip, asn);
    const verdict = userAgent ? served.lookup.crawlerVerdict(signals, userAgent) : null;
    if (verdict?.fake) signals = { ...signals, fakeCrawler: verdict.claim };
    const crawler = signals.crawler || verdict?.fake
      ? served.data.risk.explain(ip, asn, verdict).crawler
      : null;
    facts = factsOf(ip, { result, signals, crawler });
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    facts = factsOf(ip, null);
  }
  return decide(policy, facts);
}

/** The forward-auth answer: 204 to allow, 403 to deny, the decision's headers, no body. */
export function authAnswer(decision: Decision): {
  status: 204 | 403;
  headers: Record<string, string>;
  body: null;
} {
  return { status: decision.action === "deny" ? 403 : 204, headers: decision.headers, body: null };
}

/** The rule's matched facts when every condition holds, else null. */
function matchRule(rule: PolicyRule, facts: AddressFacts): MatchedFact[] | null {
  // Cheapest conditions first; the reported order is CONDITIONS' (cidr first).
  let country: string | null = null;
  if (rule.country) {
    if (facts.country === null || !rule.country.has(facts.country)) return null;
    country = facts.country;
  }
  let continent: string | null = null;
  if (rule.continent) {
    if (facts.continent === null || !rule.continent.has(facts.continent)) return null;
    continent = facts.continent;
  }
  let asn: string | null = null;
  if (rule.asn) {
    if (facts.asn === null || !rule.asn.has(facts.asn)) return null;
    asn = String(facts.asn);
  }
  let security: string | null = null;
  if (rule.security) {
    if ((rule.securityBits & facts.tags) === 0) return null;
    security = rule.security.find((tag) => (TAG_BITS.get(tag)! & facts.tags) !== 0)!;
  }
  let cidr: string | null = null;
  if (rule.cidr) {
    cidr = rule.cidr.find((c) => cidrContains(c.block, facts.ip))?.text ?? null;
    if (cidr === null) return null;
  }
  const matched: MatchedFact[] = [];
  if (cidr !== null) matched.push({ condition: "cidr", value: cidr });
  if (country !== null) matched.push({ condition: "country", value: country });
  if (continent !== null) matched.push({ condition: "continent", value: continent });
  if (asn !== null) matched.push({ condition: "asn", value: asn });
  if (security !== null) matched.push({ condition: "security", value: security });
  return matched;
}

function decision(
  policy: Policy,
  rule: string,
  verdict: RuleAction,
  matched: readonly MatchedFact[],
  facts: AddressFacts,
): Decision {
  const action = verdict === "deny" ? "deny" : "allow";
  return {
    action,
    rule,
    verdict,
    matched,
    facts,
    headers: {
      // Empty when unknown: a proxy copying the header gets a defined value either way.
      "X-IP-Country": facts.country ?? "",
      "X-IP-ASN": facts.asn === null ? "" : String(facts.asn),
      "X-IP-Risk": facts.riskText,
      "X-IP-Policy-Rule": rule,
      "Cache-Control": policy.cacheSeconds > 0 ? `max-age=${policy.cacheSeconds}` : "no-store",
    },
  };
}
