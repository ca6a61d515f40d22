/**
 * `ipintel mcp`: the MCP server over stdio, as an assistant starts it (a local
 * command), driven by the protocol's own SDK client, on the real default data.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";
import { runCli } from "../../_cli.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;

type ToolAnswer = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
};

Deno.test("ipintel mcp answers an assistant over stdio: the tools, 8.8.8.8's country and ASN, errors as tool errors", async () => {
  const dir = await Deno.makeTempDir();
  const policy = `${dir}/policy.json`;
  await Deno.writeTextFile(
    policy,
    JSON.stringify({
      default: "allow",
      rules: [{ name: "embargo", action: "deny", country: ["US"] }],
    }),
  );
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "main.ts", "mcp"],
    cwd: ROOT,
    env: {
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_UPDATE_INTERVAL: "off",
      IPINTEL_POLICY: policy,
      NO_COLOR: "1",
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "ipintel-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), [
      "lookup_ip",
      "lookup_many",
      "explain_risk",
      "asn",
      "policy_decision",
      "data_status",
    ]);
    const google = await client.callTool({
      name: "lookup_ip",
      arguments: { ip: "8.8.8.8", get: "countryCode,asn_number,asn_org" },
    }) as ToolAnswer;
    assert.equal(google.isError, undefined, google.content[0]?.text);
    assert.deepEqual(google.structuredContent, {
      ip: "8.8.8.8",
      countryCode: "US",
      asn_number: 15169,
      asn_org: "Google LLC",
    });
    const as = await client.callTool({
      name: "asn",
      arguments: { n: "AS15169", get: "name" },
    }) as ToolAnswer;
    assert.deepEqual(as.structuredContent, { asn: 15169, name: "Google LLC" });
    const bad = await client.callTool({
      name: "lookup_ip",
      arguments: { ip: "8.8.8" },
    }) as ToolAnswer;
    assert.equal(bad.isError, true);
    assert.match(bad.content[0]!.text, /Invalid IP address "8\.8\.8"/);
    const status = await client.callTool({ name: "data_status", arguments: {} }) as ToolAnswer;
    const sources = (status.structuredContent as { sources: { kind: string }[] }).sources;
    assert.ok(sources.some((s) => s.kind === "city"), "the City database is listed");
    // Without IPINTEL_STATUS_DETAIL the policy file is named, not where it lies.
    const shownPolicy = (status.structuredContent as { policy: { file: string } }).policy;
    assert.equal(shownPolicy.file, "policy.json");
    assert.ok(!JSON.stringify(status.structuredContent).includes(dir));
    const many = await client.callTool({
      name: "lookup_many",
      arguments: { ips: ["8.8.8.8", "1.1.1.1"], get: "countryCode" },
    }) as ToolAnswer;
    assert.deepEqual(many.structuredContent, {
      items: [{ ip: "8.8.8.8", countryCode: "US" }, { ip: "1.1.1.1", countryCode: "AU" }],
    });
    const risk = await client.callTool({
      name: "explain_risk",
      arguments: { ip: "8.8.8.8" },
    }) as ToolAnswer;
    assert.match(
      (risk.structuredContent as { risk: { reason: string } }).risk.reason,
      /no security source/,
      "the default data installs no security list, and says so",
    );
    const decision = await client.callTool({
      name: "policy_decision",
      arguments: { ip: "8.8.8.8" },
    }) as ToolAnswer;
    assert.equal(decision.isError, undefined, decision.content[0]?.text);
    assert.deepEqual(
      [decision.structuredContent!.action, decision.structuredContent!.rule],
      ["deny", "embargo"],
    );
    // The same JSON as the CLI's `policy test --json`: the policy's facts, not its encoding.
    const cli = await runCli(["policy", "test", "--json", "8.8.8.8"], {
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_UPDATE_INTERVAL: "off",
      IPINTEL_POLICY: policy,
      NO_COLOR: "1",
    });
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(decision.structuredContent, JSON.parse(cli.stdout));
    assert.ok(!JSON.stringify(decision.structuredContent).includes('"bytes"'));
    const unknown = await client.callTool({ name: "whois", arguments: {} }) as ToolAnswer;
    assert.equal(unknown.isError, true);
  } finally {
    await client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ipintel mcp writes every answer before it exits when standard input ends, and stdout carries only the protocol", async () => {
  const messages = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "pipe", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    // The ASN index is built on this first question: the answer comes after the input ended.
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "asn", arguments: { n: 15169 } },
    },
  ];
  const { code, stdout } = await runCli(
    ["mcp"],
    { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" },
    60_000,
    messages.map((m) => JSON.stringify(m)).join("\n") + "\n",
  );
  assert.equal(code, 0);
  const answers = stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(answers.map((a) => a.id), [1, 2]);
  assert.equal(answers[1].result.structuredContent.name, "Google LLC");
});
