/**
 * The MCP tools check their arguments as the API checks its query, with the
 * API's messages, before a unit is charged; `userAgent` is the lookup's user
 * agent; `policy_decision` answers what `ipintel policy test --json` prints;
 * `data_status` names no path on the server.
 */

import assert from "node:assert/strict";
import { PolicyGate } from "../../../src/service/policy/gate.ts";
import { readPolicyFile } from "../../../src/service/policy/file.ts";
import { USER_AGENT_MAX } from "../../../src/service/mcp/arguments.ts";
import { CHROME, peer } from "../../_helpers.ts";
import { call, connect, keyedApp } from "./_mcp_app.ts";

const IP = "81.2.69.142";

Deno.test("a refused argument is a tool error with the API's message, and charges nothing", async () => {
  const { app, key } = await keyedApp(3);
  const api = async (query: string) => {
    const response = await app.fetch(
      new Request(`http://localhost/ip/${IP}?${query}`, { headers: { "x-api-key": key } }),
      peer("203.0.113.7"),
    );
    assert.equal(response.status, 400, query);
    return (await response.json()).message as string;
  };
  const client = await connect(app, key);
  try {
    const refused: [string, Record<string, unknown>, string | RegExp][] = [
      ["lookup_ip", { ip: IP, lang: "xx" }, await api("lang=xx")],
      ["lookup_many", { ips: [IP, IP, IP], lang: "xx" }, await api("lang=xx")],
      ["lookup_ip", { ip: IP, get: "nope" }, await api("get=nope")],
      ["lookup_many", { ips: [IP], get: "nope" }, await api("get=nope")],
      ["lookup_ip", { ip: IP, at: "yesterday" }, await api("at=yesterday")],
      ["explain_risk", { ip: IP, at: "yesterday" }, await api("at=yesterday")],
      ["lookup_ip", { ip: "1.2.3" }, /^Invalid IP address "1\.2\.3"/],
      ["explain_risk", { ip: "1.2.3" }, /^Invalid IP address "1\.2\.3"/],
      ["asn", { n: "ASX" }, /AS number "ASX"/],
      [
        "lookup_ip",
        { ip: IP, userAgent: "x".repeat(USER_AGENT_MAX + 1) },
        `Invalid userAgent: ${
          USER_AGENT_MAX + 1
        } characters, more than the limit of ${USER_AGENT_MAX}`,
      ],
      ["explain_risk", { ip: IP, userAgent: "x".repeat(USER_AGENT_MAX + 1) }, /Invalid userAgent/],
    ];
    for (const [tool, args, message] of refused) {
      const answer = await call(client, tool, args);
      assert.equal(answer.isError, true, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
      const text = answer.content[0]!.text;
      if (typeof message === "string") assert.equal(text, message, tool);
      else assert.match(text, message, tool);
    }
    // Nothing was charged: the three units are all there.
    for (let i = 0; i < 3; i++) {
      const answer = await call(client, "lookup_ip", { ip: IP, get: "country" });
      assert.ok(!answer.isError, answer.content[0]?.text);
    }
  } finally {
    await client.close();
  }
});

Deno.test("lookup_ip and explain_risk take userAgent as the lookup's user agent, as ua= on /ip", async () => {
  const { app, key } = await keyedApp(100);
  const client = await connect(app, key);
  try {
    const answer = await call(client, "lookup_ip", { ip: IP, get: "userAgent", userAgent: CHROME });
    const api = await app.fetch(
      new Request(`http://localhost/ip/${IP}?get=userAgent&ua=${encodeURIComponent(CHROME)}`, {
        headers: { "x-api-key": key },
      }),
      peer("203.0.113.7"),
    );
    const data = (await api.json()).data;
    assert.equal(data.userAgent.browser.name, "Chrome");
    assert.deepEqual(answer.structuredContent, data);
    const risk = await call(client, "explain_risk", { ip: IP, userAgent: CHROME });
    assert.ok(!risk.isError, risk.content[0]?.text);
    assert.ok("risk" in risk.structuredContent!);
  } finally {
    await client.close();
  }
});

Deno.test("policy_decision answers the facts of policy test --json; data_status and /status name the policy file only", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/edge-policy.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({ default: "allow", rules: [{ name: "uk", action: "deny", country: ["GB"] }] }),
  );
  const policy = new PolicyGate(await readPolicyFile(path));
  try {
    for (const statusDetail of [false, true]) {
      const { app, key } = await keyedApp(100, { statusDetail }, undefined, { policy });
      const client = await connect(app, key);
      try {
        const decision = await call(client, "policy_decision", { ip: IP });
        assert.ok(!decision.isError, decision.content[0]?.text);
        assert.deepEqual(decision.structuredContent, {
          ip: IP,
          action: "deny",
          rule: "uk",
          ruleAction: "deny",
          matched: [{ condition: "country", value: "GB" }],
          facts: {
            found: true,
            country: "GB",
            continent: "EU",
            asn: 20712,
            risk: [],
            crawler: null,
            isThreat: null,
          },
          headers: {
            "Cache-Control": "no-store",
            "X-IP-Country": "GB",
            "X-IP-ASN": "20712",
            "X-IP-Risk": "",
            "X-IP-Policy-Rule": "uk",
          },
        });
        const bad = await call(client, "policy_decision", { ip: "1.2.3" });
        assert.match(bad.content[0]!.text, /^Invalid IP address "1\.2\.3"/);

        const status = await call(client, "data_status");
        const shown = (status.structuredContent as { policy: { file: string } }).policy.file;
        const api = await app.fetch(
          new Request("http://localhost/status", { headers: { "x-api-key": key } }),
          peer("203.0.113.7"),
        );
        const apiText = await api.text();
        assert.equal(JSON.parse(apiText).data.policy.file, shown);
        if (statusDetail) assert.equal(shown, path);
        else {
          assert.equal(shown, "edge-policy.json");
          assert.ok(!apiText.includes(dir), "/status names no directory of the server");
          assert.ok(!JSON.stringify(status.structuredContent).includes(dir));
        }
      } finally {
        await client.close();
      }
    }
  } finally {
    policy.close();
    await Deno.remove(dir, { recursive: true });
  }
});
