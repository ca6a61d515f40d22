/** Decisions counted per rule and action, rendered for /metrics. */

import assert from "node:assert/strict";
import { pythonWith } from "../../_python.ts";
import {
  DecisionCounter,
  decisionCountsBuffer,
  renderDecisionCounts,
  RULE_SLOTS,
} from "../../../src/service/policy/counter.ts";

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
  // Label values are escaped as the format says (validated rule names never need it).
  assert.match(
    renderDecisionCounts(new Map([['a"b\\c', { allow: 1, deny: 0, report: 0 }]])),
    /\{rule="a\\"b\\\\c",action="allow"\} 1\n$/,
  );
});

Deno.test("a worker isolate's counts and this one's add up in one buffer, whoever renders", async () => {
  const buffer = decisionCountsBuffer(2);
  const here = new DecisionCounter({ buffer, isolates: 2, slice: 0 });
  here.count({ rule: "no-tor", verdict: "deny" });
  const worker = new Worker(new URL("./_count_worker.ts", import.meta.url), { type: "module" });
  try {
    const done = new Promise((resolve) => worker.onmessage = resolve);
    worker.postMessage({
      buffer,
      isolates: 2,
      slice: 1,
      // A rule this isolate has not seen, and one it has (claimed by name, not by order).
      decisions: [["watch", "report"], ["no-tor", "deny"], ["no-tor", "deny"], [
        "default",
        "allow",
      ]],
    });
    await done;
  } finally {
    worker.terminate();
  }
  here.count({ rule: "watch", verdict: "report" });
  const expected = {
    "no-tor": { allow: 0, deny: 3, report: 0 },
    watch: { allow: 0, deny: 0, report: 2 },
    default: { allow: 1, deny: 0, report: 0 },
  };
  assert.deepEqual(Object.fromEntries(here.snapshot()), expected);
  // Another view of the same buffer (the isolate a scrape reaches) renders the same.
  const other = new DecisionCounter({ buffer, isolates: 2, slice: 1 });
  assert.deepEqual(Object.fromEntries(other.snapshot()), expected);
  assert.equal(other.render(), here.render());
});

Deno.test("more rule names than slots are counted together, never lost", () => {
  const counter = new DecisionCounter();
  for (let i = 0; i < RULE_SLOTS + 10; i++) counter.count({ rule: `r${i}`, verdict: "deny" });
  const counts = counter.snapshot();
  assert.equal(counts.size, RULE_SLOTS);
  assert.equal(counts.get("r0")!.deny, 1);
  assert.equal(counts.get("(more rules than counted)")!.deny, 11);
  assert.equal([...counts.values()].reduce((n, c) => n + c.deny, 0), RULE_SLOTS + 10);
});

Deno.test("a buffer of the wrong size is refused", () => {
  assert.throws(
    () => new DecisionCounter({ buffer: decisionCountsBuffer(1), isolates: 2, slice: 1 }),
    /decision counts buffer holds/,
  );
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
