/** The policy file's checks: every mistake is a PolicyError (a ConfigError: exit 2) naming the rule. */

import assert from "node:assert/strict";
import { ConfigError } from "../../../src/base/config.ts";
import { parsePolicy, PolicyError } from "../../../src/service/policy/policy.ts";

const WHERE = 'IPINTEL_POLICY "/etc/ipintel/policy.json"';

const office = { name: "office", action: "allow", cidr: ["203.0.113.0/24"] };
const withRules = (...rules: unknown[]) => ({ default: "allow", rules });

/** [what is wrong, the policy, the message after the file's name] */
const BAD: [string, unknown, RegExp][] = [
  ["not an object", [office], /expected a JSON object with default and rules/],
  [
    "a misspelt top-level field",
    { default: "allow", rule: [office] },
    /unknown field "rule" \(did you mean "rules"\?\); expected default, cacheSeconds, rules/,
  ],
  ["no default", { rules: [office] }, /"default" must be "allow" or "deny", not missing/],
  [
    "default report",
    { default: "report", rules: [] },
    /"default" must be "allow" or "deny", not "report"/,
  ],
  [
    "rules not a list",
    { default: "allow", rules: { office } },
    /"rules" must be an array of rules/,
  ],
  [
    "cacheSeconds as text",
    { default: "allow", cacheSeconds: "60", rules: [] },
    /"cacheSeconds" must be an integer from 0 to 86400, not "60"/,
  ],
  [
    "cacheSeconds negative",
    { default: "allow", cacheSeconds: -1 },
    /"cacheSeconds" must be an integer/,
  ],
  [
    "cacheSeconds fractional",
    { default: "allow", cacheSeconds: 1.5 },
    /"cacheSeconds" must be an integer/,
  ],
  [
    "a misspelt condition",
    withRules(office, { name: "no-tor", action: "deny", securty: ["tor"] }),
    /rule 2 "no-tor": unknown field "securty" \(did you mean "security"\?\); expected name, action/,
  ],
  [
    "a field that is nothing like one",
    withRules({ name: "x", action: "deny", country: ["KP"], hours: [9, 17] }),
    /rule 1 "x": unknown field "hours"; expected/,
  ],
  [
    "a bad CIDR (prefix)",
    withRules({ name: "office", action: "allow", cidr: ["203.0.113.0/33"] }),
    /rule 1 "office": "cidr": "203\.0\.113\.0\/33" is not a CIDR block/,
  ],
  [
    "a bad CIDR (address)",
    withRules({ name: "office", action: "allow", cidr: ["203.0.113/24"] }),
    /rule 1 "office": "cidr": "203\.0\.113\/24" is not a CIDR block/,
  ],
  [
    "a bad IPv6 CIDR",
    withRules({ name: "v6", action: "allow", cidr: ["2001:db8::/129"] }),
    /rule 1 "v6": "cidr": "2001:db8::\/129" is not/,
  ],
  [
    "an unknown country code",
    withRules(office, { name: "embargo", action: "deny", country: ["KP", "XX"] }),
    /rule 2 "embargo": "country": "XX" is not a known ISO 3166-1 alpha-2 country code/,
  ],
  [
    "a country name",
    withRules({ name: "embargo", action: "deny", country: ["North Korea"] }),
    /"country": "North Korea" is not a known ISO 3166-1/,
  ],
  [
    "an unknown continent",
    withRules({ name: "c", action: "deny", continent: ["EUR"] }),
    /rule 1 "c": "continent": "EUR" is not a continent code \(AF, AN, AS, EU, NA, OC, SA\)/,
  ],
  [
    "a bad AS number",
    withRules({ name: "a", action: "deny", asn: ["ASX1"] }),
    /rule 1 "a": "asn": "ASX1" is not an AS number/,
  ],
  [
    "an AS number too big",
    withRules({ name: "a", action: "deny", asn: [4294967296] }),
    /"asn": 4294967296 is not an AS number/,
  ],
  [
    "an unknown security tag",
    withRules({ name: "t", action: "deny", security: ["tors"] }),
    /rule 1 "t": "security": "tors" is not a security tag \(tor, vpn, relay, hosting, threat, threat:low, threat:medium, threat:high, crawler, fake-crawler\)/,
  ],
  [
    "an unknown threat level",
    withRules({ name: "t", action: "deny", security: ["threat:severe"] }),
    /"security": "threat:severe" is not a security tag/,
  ],
  [
    "an unknown action",
    withRules({ name: "b", action: "block", country: ["KP"] }),
    /rule 1 "b": "action" must be "allow", "deny" or "report", not "block"/,
  ],
  ["no name", withRules(office, { action: "deny", country: ["KP"] }), /rule 2: "name" is required/],
  [
    "a name with a space",
    withRules({ name: "no tor", action: "deny", security: ["tor"] }),
    /rule 1 "no tor": "name" must be 1 to 64 letters/,
  ],
  [
    "the name default",
    withRules({ name: "default", action: "deny", security: ["tor"] }),
    /rule 1 "default": "default" is the name of the default action/,
  ],
  [
    "two rules of one name",
    withRules(office, { ...office, cidr: ["198.51.100.0/24"] }),
    /rule 2 "office": the name is used by an earlier rule/,
  ],
  [
    "a rule without conditions",
    withRules({ name: "all", action: "deny" }),
    /rule 1 "all": no condition \(cidr, country, continent, asn, security\): it would match every address/,
  ],
  [
    "an empty condition",
    withRules({ name: "e", action: "deny", country: [] }),
    /rule 1 "e": "country" must be a non-empty array/,
  ],
  [
    "a condition that is not a list",
    withRules({ name: "e", action: "deny", country: "KP" }),
    /rule 1 "e": "country" must be a non-empty array/,
  ],
  ["a rule that is not an object", withRules("office"), /rule 1: expected an object/],
];

Deno.test("each mistake in a policy is refused, naming the file, the rule and the problem", () => {
  for (const [what, json, message] of BAD) {
    assert.throws(() => parsePolicy(json, WHERE), (error: unknown) => {
      assert.ok(error instanceof PolicyError, what);
      assert.ok(error instanceof ConfigError, `${what}: the CLI's exit status 2`);
      assert.ok(error.message.startsWith(`${WHERE}: `), `${what}: ${error.message}`);
      assert.match(error.message, message, what);
      return true;
    }, what);
  }
});

Deno.test("the issue's policy is accepted as written; codes and tags are normalised", () => {
  const policy = parsePolicy({
    default: "allow",
    rules: [
      {
        name: "office",
        action: "allow",
        cidr: ["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"],
      },
      { name: "no-tor", action: "deny", security: ["tor"] },
      { name: "embargo", action: "deny", country: ["KP", "ir"] },
      { name: "watch", action: "report", security: ["vpn", "hosting", "THREAT:HIGH"] },
      {
        name: "nets",
        action: "allow",
        asn: [15169, "AS13335", "as3320", "20712"],
        description: "ours",
      },
      { name: "far", action: "report", continent: ["oc", "AN"] },
    ],
  }, WHERE);
  assert.equal(policy.default, "allow");
  assert.equal(policy.cacheSeconds, 0);
  assert.deepEqual(policy.rules.map((r) => [r.name, r.action]), [
    ["office", "allow"],
    ["no-tor", "deny"],
    ["embargo", "deny"],
    ["watch", "report"],
    ["nets", "allow"],
    ["far", "report"],
  ]);
  const [office, , embargo, watch, nets, far] = policy.rules;
  assert.deepEqual(office!.cidr!.map((c) => [c.text, c.block.version, c.block.prefix]), [
    ["203.0.113.0/24", 4, 24],
    ["2001:db8::/32", 6, 32],
    ["198.51.100.7", 4, 32],
  ]);
  assert.deepEqual([...embargo!.country!], ["KP", "IR"]);
  assert.deepEqual(watch!.security, ["vpn", "hosting", "threat:high"]);
  assert.deepEqual([...nets!.asn!], [15169, 13335, 3320, 20712]);
  assert.equal(nets!.description, "ours");
  assert.deepEqual([...far!.continent!], ["OC", "AN"]);
  assert.ok(Object.isFrozen(policy) && Object.isFrozen(policy.rules));
});

Deno.test("a policy of no rules judges everything by its default", () => {
  assert.deepEqual(parsePolicy({ default: "deny" }, WHERE).rules, []);
  assert.equal(parsePolicy({ default: "deny", cacheSeconds: 86400 }, WHERE).cacheSeconds, 86400);
});
