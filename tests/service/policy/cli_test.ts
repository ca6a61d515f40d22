/** `ipintel policy test` and `ipintel policy check`, run as a user runs them. */

import assert from "node:assert/strict";
import { runCli } from "../../_cli.ts";
import { CRAWLER_GATE_FEEDS, writeGateDataDir } from "./_gate_data.ts";

const POLICY = {
  default: "allow",
  cacheSeconds: 30,
  rules: [
    { name: "office", action: "allow", cidr: ["185.220.101.4/32"] },
    { name: "no-tor", action: "deny", security: ["tor"] },
    { name: "embargo", action: "deny", country: ["US"] },
    { name: "watch", action: "report", security: ["vpn", "hosting"] },
  ],
};

async function withSetup(
  test: (env: Record<string, string>, policyPath: string) => Promise<void>,
  feeds?: Parameters<typeof writeGateDataDir>[0],
  policy: unknown = POLICY,
) {
  const dataDir = await writeGateDataDir(feeds);
  const policyPath = `${dataDir}/policy.json`;
  await Deno.writeTextFile(policyPath, JSON.stringify(policy));
  // No configured source: none is reported absent, none is fetched.
  await Deno.writeTextFile(`${dataDir}/sources.json`, JSON.stringify({ sources: [] }));
  try {
    await test({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_SOURCES: `${dataDir}/sources.json`,
      IPINTEL_POLICY: policyPath,
      NO_COLOR: "1",
    }, policyPath);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("policy test names each address's decision, rule and matched facts", async () => {
  await withSetup(async (env) => {
    const { code, stdout, stderr } = await runCli(
      [
        "policy",
        "test",
        "8.8.8.8",
        "81.2.69.160",
        "185.220.101.34",
        "185.220.101.4",
        "2.26.157.10",
        "10.0.0.1",
        "nope",
      ],
      env,
    );
    assert.equal(code, 1, stderr); // one address was not an address
    assert.match(stderr, /version [0-9a-f]{12}, 4 rule\(s\), default allow, cached 30 s/);
    assert.match(stderr, /Invalid IP address "nope"/);
    assert.equal(
      stdout,
      [
        "8.8.8.8\tdeny\trule embargo (country US)\t· country US, continent NA, AS15169, risk none, isThreat low",
        "81.2.69.160\tallow\tdefault (no rule matched)\t· country GB, continent EU, AS20712, risk none, isThreat low",
        "185.220.101.34\tdeny\trule no-tor (security tor)\t· country DE, continent EU, AS60729, risk tor, isThreat high",
        "185.220.101.4\tallow\trule office (cidr 185.220.101.4/32)\t· country DE, continent EU, AS60729, risk tor, isThreat high",
        "2.26.157.10\tallow, reported\trule watch (security vpn)\t· country GB, continent EU, AS5089, risk vpn, isThreat medium",
        // 10/8 is placed in the US by the fixture City (the continent comes from the country).
        "10.0.0.1\tdeny\trule embargo (country US)\t· country US, continent NA, AS unknown, risk none, isThreat low",
        "",
      ].join("\n"),
    );
    const json = await runCli(["policy", "test", "--json", "185.220.101.34"], env);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), {
      ip: "185.220.101.34",
      action: "deny",
      rule: "no-tor",
      ruleAction: "deny",
      matched: [{ condition: "security", value: "tor" }],
      facts: {
        found: true,
        country: "DE",
        continent: "EU",
        asn: 60729,
        risk: ["tor"],
        crawler: null,
        isThreat: "high",
      },
      headers: {
        "X-IP-Country": "DE",
        "X-IP-ASN": "60729",
        "X-IP-Risk": "tor",
        "X-IP-Policy-Rule": "no-tor",
        "Cache-Control": "max-age=30",
      },
    });
  });
});

Deno.test("a misspelt field stops policy test and check with exit 2 naming the rule", async () => {
  await withSetup(async (env, policyPath) => {
    const check = await runCli(["policy", "check"], env);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /^policy .*policy\.json: version [0-9a-f]{12}, 4 rule\(s\)/);
    assert.match(
      check.stdout,
      /\n {2}office: allow\n {2}no-tor: deny\n {2}embargo: deny\n {2}watch: report\n$/,
    );

    const misspelt = JSON.stringify(POLICY).replace('"country"', '"contry"');
    await Deno.writeTextFile(policyPath, misspelt);
    for (const args of [["policy", "check"], ["policy", "test", "8.8.8.8"]]) {
      const { code, stdout, stderr } = await runCli(args, env);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, "");
      assert.match(
        stderr,
        /IPINTEL_POLICY ".*policy\.json": rule 3 "embargo": unknown field "contry" \(did you mean "country"\?\)/,
      );
    }
    const unset = await runCli(["policy", "check"], { ...env, IPINTEL_POLICY: "" });
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /No policy file: set IPINTEL_POLICY or give --policy <file>/);
  });
});

Deno.test("policy test warns of security rules no installed list can answer", async () => {
  await withSetup(async (env) => {
    const { code, stdout, stderr } = await runCli(["policy", "test", "185.220.101.34"], env);
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      /warning: rule "no-tor": no installed source answers security tor, so the rule never matches/,
    );
    assert.match(
      stderr,
      /warning: rule "watch": no installed source answers security hosting, so those values never match/,
    );
    // Without a Tor list the exit is judged by the rules that can answer.
    assert.match(
      stdout,
      /^185\.220\.101\.34\tallow\tdefault \(no rule matched\)\t· country DE, .*risk none/,
    );
  }, [{ name: "x4bnet-vpn-ipv4", kind: "vpn", file: "x4bnet_vpn_ipv4.txt" }]);
});

Deno.test("policy test --user-agent judges a crawler's claim: the real one allowed, the fake denied", async () => {
  const policy = {
    default: "allow",
    rules: [
      { name: "real-crawlers", action: "allow", security: ["crawler"] },
      { name: "fake-crawlers", action: "deny", security: ["fake-crawler"] },
      { name: "no-hosting", action: "deny", security: ["hosting"] },
    ],
  };
  await withSetup(
    async (env) => {
      const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
      const { code, stdout, stderr } = await runCli(
        ["policy", "test", "--user-agent", googlebot, "66.249.66.1", "3.5.140.1"],
        env,
      );
      assert.equal(code, 0, stderr);
      assert.doesNotMatch(stderr, /warning/);
      assert.equal(
        stdout,
        [
          "66.249.66.1\tallow\trule real-crawlers (security crawler)\t· country US, continent NA, AS15169, risk hosting, crawler Googlebot, isThreat low",
          "3.5.140.1\tdeny\trule fake-crawlers (security fake-crawler)\t· country KR, continent AS, AS16509, risk hosting, fake crawler Googlebot, isThreat medium",
          "",
        ].join("\n"),
      );
      // Without a user agent nothing is claimed: the AWS address is a hosting address.
      const plain = await runCli(["policy", "test", "--json", "3.5.140.1"], env);
      const decision = JSON.parse(plain.stdout);
      assert.deepEqual([decision.rule, decision.facts.crawler], ["no-hosting", null]);
      const json = await runCli(
        ["policy", "test", "--json", "--user-agent", googlebot, "66.249.66.1"],
        env,
      );
      const real = JSON.parse(json.stdout);
      assert.deepEqual(real.facts.crawler, {
        name: "Googlebot",
        operator: "Google",
        verified: true,
      });
      assert.equal(real.headers["X-IP-Risk"], "hosting,crawler:Googlebot");
    },
    CRAWLER_GATE_FEEDS,
    policy,
  );
});

Deno.test("policy test warns of crawler rules while no crawler list is installed", async () => {
  const policy = {
    default: "allow",
    rules: [{ name: "fakes", action: "deny", security: ["fake-crawler"] }],
  };
  await withSetup(
    async (env) => {
      const { code, stderr } = await runCli(["policy", "test", "8.8.8.8"], env);
      assert.equal(code, 0, stderr);
      assert.match(
        stderr,
        /warning: rule "fakes": no installed source answers security fake-crawler, so the rule never matches/,
      );
    },
    undefined,
    policy,
  );
});
