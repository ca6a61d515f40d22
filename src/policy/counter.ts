/**
 * Decisions counted per rule and verdict, for `/metrics` as
 * `ipintel_policy_decisions_total{rule="no-tor",action="deny"} 3`. Rules a
 * reloaded policy dropped keep their counts (counters never go down).
 */

import type { Decision } from "./decide.ts";
import type { RuleAction } from "./policy.ts";

export const POLICY_METRIC = "ipintel_policy_decisions_total";

export type DecisionCounts = Record<RuleAction, number>;

export class DecisionCounter {
  readonly #byRule = new Map<string, DecisionCounts>();

  count(decision: Pick<Decision, "rule" | "verdict">): void {
    let counts = this.#byRule.get(decision.rule);
    if (!counts) this.#byRule.set(decision.rule, counts = { allow: 0, deny: 0, report: 0 });
    counts[decision.verdict]++;
  }

  /** The counts so far, by rule name (a copy). */
  snapshot(): Map<string, DecisionCounts> {
    return new Map([...this.#byRule].map(([rule, counts]) => [rule, { ...counts }]));
  }

  /** The Prometheus text (HELP, TYPE, one line per rule and action counted); empty before any decision. */
  render(): string {
    return renderDecisionCounts(this.snapshot());
  }
}

/**
 * Prometheus lines for counts (several isolates' snapshots may be summed
 * first with addDecisionCounts). Only the actions a rule has taken are listed.
 */
export function renderDecisionCounts(byRule: ReadonlyMap<string, DecisionCounts>): string {
  if (byRule.size === 0) return "";
  const lines = [
    `# HELP ${POLICY_METRIC} Forward-auth decisions (GET /auth), by deciding rule and its action.`,
    `# TYPE ${POLICY_METRIC} counter`,
  ];
  for (const [rule, counts] of [...byRule].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    for (const action of ["allow", "deny", "report"] as const) {
      if (counts[action] === 0) continue;
      lines.push(
        `${POLICY_METRIC}{rule="${escapeLabel(rule)}",action="${action}"} ${counts[action]}`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

/** Sums snapshots (one per isolate) into `total`. */
export function addDecisionCounts(
  total: Map<string, DecisionCounts>,
  more: ReadonlyMap<string, DecisionCounts>,
): Map<string, DecisionCounts> {
  for (const [rule, counts] of more) {
    const sum = total.get(rule) ?? { allow: 0, deny: 0, report: 0 };
    sum.allow += counts.allow;
    sum.deny += counts.deny;
    sum.report += counts.report;
    total.set(rule, sum);
  }
  return total;
}

/** Label values escape backslash, quote and newline (rule names are plain, but the format demands it). */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);
}
