/**
 * The gate's decisions over tables of rules and addresses, on a data set with
 * real feed fixtures (Tor exits, X4BNet VPN, Cloudflare, FireHOL level 1)
 * compiled as `data update` installs them.
 */

import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import { FIXED_NOW, fixtureDataSet, fixtureLookup } from "../../_helpers.ts";
import { authAnswer, decide, judge } from "../../../src/service/policy/decide.ts";
import { factsOf } from "../../../src/service/policy/facts.ts";
import { parsePolicy, type Policy } from "../../../src/service/policy/policy.ts";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { InvalidIpError } from "../../../src/base/errors.ts";
import { gateDataSet } from "./_gate_data.ts";

const data = await gateDataSet();
const served = servedOf(data, await fixtureLookup(FIXED_NOW, data));

const policy = (json: unknown): Policy => parsePolicy(json, "test policy");

/** The issue's policy, the office being one Tor exit and an IPv6 block. */
const ISSUE_POLICY = policy({
  default: "allow",
  rules: [
    { name: "office", action: "allow", cidr: ["185.220.101.4/32", "2a02:ec0::/32"] },
    { name: "no-tor", action: "deny", security: ["tor"] },
    { name: "embargo", action: "deny", country: ["KP"] },
    { name: "watch", action: "report", security: ["vpn", "hosting"] },
  ],
});

type Row = [ip: string, status: 204 | 403, rule: string, matched: string, headers: {
  country: string;
  asn: string;
  risk: string;
}];

/** [address, status, rule, matched facts, X-IP-Country / X-IP-ASN / X-IP-Risk] */
const ISSUE_TABLE: Row[] = [
  ["185.220.101.4", 204, "office", "cidr 185.220.101.4/32", {
    country: "DE",
    asn: "60729",
    risk: "tor",
  }],
  ["185.220.101.34", 403, "no-tor", "security tor", { country: "DE", asn: "60729", risk: "tor" }],
  ["192.42.116.187", 403, "no-tor", "security tor", { country: "NL", asn: "1101", risk: "tor" }],
  ["175.45.176.1", 403, "embargo", "country KP", { country: "KP", asn: "131279", risk: "" }],
  ["2.26.157.10", 204, "watch", "security vpn", { country: "GB", asn: "5089", risk: "vpn" }],
  ["173.245.48.1", 204, "watch", "security hosting", {
    country: "US",
    asn: "13335",
    risk: "hosting",
  }],
  ["81.2.69.160", 204, "default", "", { country: "GB", asn: "20712", risk: "" }],
  ["8.8.8.8", 204, "default", "", { country: "US", asn: "15169", risk: "" }],
  ["1.10.16.5", 204, "default", "", { country: "CN", asn: "4134", risk: "threat" }],
  ["2a02:ec0::1", 204, "office", "cidr 2a02:ec0::/32", { country: "DE", asn: "3320", risk: "" }],
  // IPv4-mapped IPv6 is the IPv4 address: the same rule holds.
  ["::ffff:185.220.101.4", 204, "office", "cidr 185.220.101.4/32", {
    country: "DE",
    asn: "60729",
    risk: "tor",
  }],
  // No database knows a private address: only cidr rules and the default can judge it.
  ["192.168.1.1", 204, "default", "", { country: "", asn: "", risk: "" }],
];

const matchedText = (d: ReturnType<typeof decide>) =>
  d.matched.map((m) => `${m.condition} ${m.value}`).join(", ");

Deno.test("the issue's policy: first matching rule wins, with the headers a proxy copies", () => {
  for (const [ip, status, rule, matched, headers] of ISSUE_TABLE) {
    const decision = judge(served, ISSUE_POLICY, ip);
    const answer = authAnswer(decision);
    assert.equal(answer.status, status, ip);
    assert.equal(answer.body, null);
    assert.equal(decision.rule, rule, ip);
    assert.equal(matchedText(decision), matched, ip);
    assert.deepEqual(answer.headers, {
      "X-IP-Country": headers.country,
      "X-IP-ASN": headers.asn,
      "X-IP-Risk": headers.risk,
      "X-IP-Policy-Rule": rule,
      "Cache-Control": "no-store",
    }, ip);
  }
});

Deno.test("report allows and tags; deny is the only 403", () => {
  const watched = judge(served, ISSUE_POLICY, "2.26.157.10");
  assert.equal(watched.action, "allow");
  assert.equal(watched.verdict, "report");
  assert.equal(authAnswer(watched).status, 204);
  // The same rule enforced: only the status and the action change.
  const enforced = policy({
    default: "allow",
    rules: [{ name: "watch", action: "deny", security: ["vpn", "hosting"] }],
  });
  const denied = judge(served, enforced, "2.26.157.10");
  assert.equal(authAnswer(denied).status, 403);
  assert.equal(denied.rule, "watch");
});

Deno.test("within a rule every condition is required; values of one condition are alternatives", () => {
  const combined = policy({
    default: "deny",
    cacheSeconds: 120,
    rules: [
      // country AND asn: Cloudflare in the US, not Google in the US.
      { name: "us-cloudflare", action: "allow", country: ["US"], asn: ["AS13335"] },
      // continent AND security: a European Tor exit, not a European VPN.
      { name: "eu-tor", action: "deny", continent: ["eu"], security: ["tor"] },
      // Either AS number.
      { name: "known-nets", action: "allow", asn: [15169, "20712"] },
      // Either threat level.
      { name: "risky", action: "report", security: ["threat:high", "threat:medium"] },
      // cidr AND country: the block holds only part of the country's addresses.
      { name: "cidr-and-country", action: "allow", cidr: ["2a02:ec0::/29"], country: ["DE"] },
    ],
  });
  const table: [string, string, string][] = [
    ["173.245.48.1", "us-cloudflare", "country US, asn 13335"],
    ["8.8.8.8", "known-nets", "asn 15169"],
    ["81.2.69.160", "known-nets", "asn 20712"],
    ["192.42.116.196", "eu-tor", "continent EU, security tor"],
    ["2.26.157.10", "risky", "security threat:medium"], // a VPN is medium
    ["1.10.16.5", "risky", "security threat:high"], // a FireHOL network is high
    ["2a02:ec0::1", "cidr-and-country", "cidr 2a02:ec0::/29, country DE"],
    ["175.45.176.1", "default", ""],
    ["192.168.1.1", "default", ""],
  ];
  for (const [ip, rule, matched] of table) {
    const decision = judge(served, combined, ip);
    assert.equal(decision.rule, rule, ip);
    assert.equal(matchedText(decision), matched, ip);
    assert.equal(decision.headers["Cache-Control"], "max-age=120", ip);
    assert.equal(
      authAnswer(decision).status,
      rule === "eu-tor" || rule === "default" ? 403 : 204,
      ip,
    );
  }
});

Deno.test("threat levels match exactly; `threat` alone is a threat list's listing", () => {
  const byTag = (tag: string) =>
    policy({ default: "allow", rules: [{ name: "r", action: "deny", security: [tag] }] });
  const table: [string, string[]][] = [
    ["185.220.101.34", ["tor", "threat:high"]], // a Tor exit: high, on no threat list
    ["1.10.16.5", ["threat", "threat:high"]],
    ["2.26.157.10", ["vpn", "threat:medium"]],
    ["173.245.48.1", ["hosting", "threat:medium"]],
    ["81.2.69.160", ["threat:low"]],
    ["192.168.1.1", []], // not found: no facts, no tag
  ];
  const tags = [
    "tor",
    "vpn",
    "relay",
    "hosting",
    "threat",
    "threat:low",
    "threat:medium",
    "threat:high",
  ];
  for (const [ip, expected] of table) {
    const held = tags.filter((tag) => judge(served, byTag(tag), ip).rule === "r");
    assert.deepEqual(held, expected, ip);
  }
});

Deno.test("with no security source installed, security rules never match and the facts say unknown", async () => {
  const bare = servedOf(await fixtureDataSet(), await fixtureLookup()); // City and ASN only
  const decision = judge(bare, ISSUE_POLICY, "81.2.69.160");
  assert.equal(decision.rule, "default");
  assert.deepEqual(decision.facts.risk, []);
  assert.equal(decision.facts.threat, null);
  assert.equal(decision.headers["X-IP-Risk"], "");
});

Deno.test("decide() reads facts, not the lookup: the same facts, the same decision", () => {
  const facts = factsOf(parseIp("203.0.113.9"), null);
  const office = policy({
    default: "deny",
    rules: [{ name: "office", action: "allow", cidr: ["203.0.113.0/24"] }],
  });
  assert.equal(decide(office, facts).rule, "office");
  assert.equal(decide(office, factsOf(parseIp("203.0.114.9"), null)).rule, "default");
  assert.equal(authAnswer(decide(office, factsOf(parseIp("203.0.114.9"), null))).status, 403);
});

Deno.test("an address that is not one is an InvalidIpError naming it", () => {
  assert.throws(() => judge(served, ISSUE_POLICY, "not-an-ip"), (error: unknown) => {
    assert.ok(error instanceof InvalidIpError);
    assert.match(error.message, /"not-an-ip"/);
    return true;
  });
});
