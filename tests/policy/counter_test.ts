/** Decisions counted per rule and action, rendered for /metrics. */

import assert from "node:assert/strict";
import { pythonWith } from "../_python.ts";
import {
  addDecisionCounts,
  DecisionCounter,
  renderDecisionCounts,
} from "../../src/policy/counter.ts";

function counted(): DecisionCounter {
  const counter = new DecisionCounter();
  const decisions = [
    ["no-tor", "deny"],
    ["no-tor", "deny"],
    ["default", "allow"],
    ["watch", "report"],
    ["office", "allow"],
    ["default", "allow"],
    ["no-tor", "deny"],
  ] as const;
  for (const [rule, verdict] of decisions) counter.count({ rule, verdict });
  return counter;
}

const EXPECTED =
  `# HELP ipintel_policy_decisions_total Forward-auth decisions (GET /auth), by deciding rule and its action.
# TYPE ipintel_policy_decisions_total counter
ipintel_policy_decisions_total{rule="default",action="allow"} 2
ipintel_policy_decisions_total{rule="no-tor",action="deny"} 3
ipintel_policy_decisions_total{rule="office",action="allow"} 1
ipintel_policy_decisions_total{rule="watch",action="report"} 1
`;

Deno.test("one line per rule and action taken, sorted by rule; nothing before any decision", () => {
  assert.equal(counted().render(), EXPECTED);
  assert.equal(new DecisionCounter().render(), "");
});

Deno.test("several isolates' counts add up", () => {
  const total = addDecisionCounts(new Map(), counted().snapshot());
  addDecisionCounts(total, counted().snapshot());
  const text = renderDecisionCounts(total);
  assert.match(text, /\{rule="no-tor",action="deny"\} 6\n/);
  assert.match(text, /\{rule="watch",action="report"\} 2\n/);
  // The snapshots are copies: adding did not change the counter's own counts.
  const counter = counted();
  addDecisionCounts(addDecisionCounts(new Map(), counter.snapshot()), counter.snapshot());
  assert.equal(counter.render(), EXPECTED);
});

const python = await pythonWith("import prometheus_client.parser");

Deno.test({
  name: python
    ? "the counts parse with the Prometheus Python client (independent check)"
    : "the counts parse with the Prometheus Python client: SKIPPED, no python3 with prometheus_client",
  ignore: !python,
  fn: async () => {
    const script = `
import sys, json
from prometheus_client.parser import text_string_to_metric_families
print(json.dumps([[s.name, s.labels, s.value]
  for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]))
`;
    const child = new Deno.Command(python!, {
      args: ["-c", script],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(EXPECTED));
    await writer.close();
    const output = await child.output();
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), [
      ["ipintel_policy_decisions_total", { rule: "default", action: "allow" }, 2],
      ["ipintel_policy_decisions_total", { rule: "no-tor", action: "deny" }, 3],
      ["ipintel_policy_decisions_total", { rule: "office", action: "allow" }, 1],
      ["ipintel_policy_decisions_total", { rule: "watch", action: "report" }, 1],
    ]);
  },
});
