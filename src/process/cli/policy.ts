/**
 * `ipintel policy test <ip>...`: what the forward-auth gate would decide for
 * each address with the installed data, by which rule and on which facts;
 * `ipintel policy check`: the file's verdict alone (for a deploy pipeline).
 */

import { type Config, type FlagValues, UsageError } from "../../base/config.ts";
import { AppError, quoteInput } from "../../base/errors.ts";
import { type Decision, judge } from "../../service/policy/decide.ts";
import { decisionJson } from "../../service/policy/decision_json.ts";
import type { AddressFacts } from "../../service/policy/facts.ts";
import { type LoadedPolicy, readPolicyFile } from "../../service/policy/file.ts";
import { policyWarnings } from "../../service/policy/warnings.ts";
import { openServed } from "../server/served.ts";
import { defineCommand } from "./command.ts";

const TEST_FLAGS = {
  json: { type: "boolean", description: "One JSON object a line (decision, facts, headers)" },
  "user-agent": {
    type: "string",
    description: "The requests' User-Agent, as /auth reads it: a crawler's claim is judged",
  },
} as const;

const testCommand = defineCommand({
  summary: "Print the gate's decision for each address, its rule and the facts that matched",
  usage: "<ip> [<ip> ...]",
  flags: TEST_FLAGS,
  positionals: { min: 1, max: Infinity },
  details: "The policy is IPINTEL_POLICY (--policy); the data is the installed set " +
    "(IPINTEL_DATA_DIR). An invalid address is named on stderr, the others are still " +
    "judged, and the exit status is 1; a bad policy file is exit status 2.",
  run: ({ config, flags, positionals }) => runTest(config, flags, positionals),
});

const checkCommand = defineCommand({
  summary: "Check the policy file; print its version and rules",
  details: "Exit status 0 when IPINTEL_POLICY (--policy) is usable, 2 naming the rule and " +
    "the problem when not.",
  run: async ({ config }) => {
    const loaded = await load(config);
    console.log(describe(loaded));
    for (const rule of loaded.policy.rules) {
      console.log(
        `  ${rule.name}: ${rule.action}${rule.description ? ` (${rule.description})` : ""}`,
      );
    }
    return 0;
  },
});

export const policyCommand = defineCommand({
  summary: "The forward-auth policy (GET /auth): test addresses against it, check the file",
  subcommands: { test: testCommand, check: checkCommand },
});

async function runTest(
  config: Config,
  flags: FlagValues<typeof TEST_FLAGS>,
  ips: readonly string[],
): Promise<number> {
  const loaded = await load(config);
  const served = await openServed(config);
  console.error(describe(loaded));
  for (const warning of policyWarnings(loaded.policy, served.data.risk)) {
    console.error(`warning: ${warning}`);
  }
  let failed = 0;
  for (const ip of ips) {
    try {
      const decision = judge(served, loaded.policy, ip, flags["user-agent"] ?? null);
      console.log(flags.json ? JSON.stringify(decisionJson(decision)) : asLine(decision));
    } catch (error) {
      console.error(
        error instanceof AppError
          ? error.message
          : `Judging ${quoteInput(ip)} failed: ${(error as Error)?.message ?? String(error)}`,
      );
      failed++;
    }
  }
  return failed ? 1 : 0;
}

async function load(config: Config): Promise<LoadedPolicy> {
  if (config.policy === null) {
    throw new UsageError("No policy file: set IPINTEL_POLICY or give --policy <file>");
  }
  return await readPolicyFile(config.policy);
}

function describe(loaded: LoadedPolicy): string {
  const { policy } = loaded;
  return `policy ${loaded.path}: version ${loaded.version}, ${policy.rules.length} rule(s), ` +
    `default ${policy.default}, ${
      policy.cacheSeconds ? `cached ${policy.cacheSeconds} s` : "not cached"
    }`;
}

/** `8.8.8.8  deny  embargo (country US)  · country US, continent NA, AS15169, risk none` */
function asLine(decision: Decision): string {
  const why = decision.rule === "default"
    ? "default (no rule matched)"
    : `rule ${decision.rule} (${
      decision.matched.map((m) => `${m.condition} ${m.value}`).join(", ")
    })`;
  const action = decision.verdict === "report" ? "allow, reported" : decision.action;
  return `${decision.facts.ip.address}\t${action}\t${why}\t· ${factsText(decision.facts)}`;
}

function factsText(facts: AddressFacts): string {
  if (!facts.found) return "no data for this address";
  return [
    `country ${facts.country ?? "unknown"}`,
    `continent ${facts.continent ?? "unknown"}`,
    facts.asn === null ? "AS unknown" : `AS${facts.asn}`,
    `risk ${facts.risk.length ? facts.risk.join(",") : "none"}`,
    ...(facts.crawler
      ? [`${facts.crawler.verified ? "crawler" : "fake crawler"} ${facts.crawler.name}`]
      : []),
    `isThreat ${facts.threat ?? "unknown"}`,
  ].join(", ");
}
