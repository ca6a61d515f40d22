/**
 * The MCP server at /mcp, driven by the protocol's own SDK client over the
 * Streamable HTTP transport, in process (the client's fetch is the app's).
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import type { App } from "../../../src/service/app/app.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { type DataSet, openDataSet } from "../../../src/data/sources/data_set.ts";
import { DEFAULT_DATA_DIR, fixtureApp, peer } from "../../_helpers.ts";

/** An app whose keys are required, with one key of `limit` requests a minute. */
async function keyedApp(limit: number, config: { mcp?: boolean } = {}, data?: DataSet) {
  const store = new MemoryKeyStore();
  const { key } = await store.create({ name: "analyst", limit });
  const keys = new KeyTable(store);
  await keys.refresh();
  const access = new AccessControl(
    { auth: "required", rateLimit: 1000, rateWindow: 60, anonRateLimit: 0 },
    keys,
    new RateLimiter({ counters: new MemoryRateCounters() }),
  );
  return { app: await fixtureApp({ access, config, data }), key };
}

/** The SDK's client, connected to `app` at /mcp with `key` (none: no Authorization). */
async function connect(app: App, key: string | null): Promise<Client> {
  const client = new Client({ name: "ipintel-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : undefined,
    fetch: (input: string | URL, init?: RequestInit) =>
      Promise.resolve(app.fetch(new Request(input, init), peer("203.0.113.7"))),
  });
  await client.connect(transport);
  return client;
}

type ToolAnswer = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
};
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  await client.callTool({ name, arguments: args }) as ToolAnswer;

Deno.test("the SDK's client lists the tools and looks up an address with a key", async () => {
  const { app, key } = await keyedApp(100);
  const client = await connect(app, key);
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
    for (const tool of tools) {
      assert.ok(tool.description && tool.description.length > 20, tool.name);
      assert.equal(tool.inputSchema.type, "object", tool.name);
    }
    const answer = await call(client, "lookup_ip", { ip: "81.2.69.142" });
    assert.equal(answer.isError, undefined);
    const data = answer.structuredContent as {
      ip: string;
      geoLocation: { countryCode: string };
      connection: { asn_number: number | null };
    };
    assert.equal(data.ip, "81.2.69.142");
    assert.equal(data.geoLocation.countryCode, "GB");
    assert.deepEqual(JSON.parse(answer.content[0]!.text), data, "the text is the same JSON");
    // The same answer as the API's /ip/{ip}.
    const api = await app.fetch(
      new Request("http://localhost/ip/81.2.69.142", { headers: { "x-api-key": key } }),
      peer("203.0.113.7"),
    );
    const apiData = (await api.json()).data;
    delete apiData.timezone.current_time;
    delete (data as unknown as { timezone: { current_time?: string } }).timezone.current_time;
    assert.deepEqual(data, apiData);
    const selected = await call(client, "lookup_ip", { ip: "81.2.69.142", get: "country" });
    assert.deepEqual(selected.structuredContent, {
      ip: "81.2.69.142",
      country: "United Kingdom",
    });
  } finally {
    await client.close();
  }
});

Deno.test("every tool answers; a bad argument and an unknown tool are tool errors, not protocol failures", async () => {
  const { app, key } = await keyedApp(100);
  const client = await connect(app, key);
  try {
    const many = await call(client, "lookup_many", { ips: ["81.2.69.142", "1.2.3"] });
    const items = (many.structuredContent as { items: { ip: string; error?: unknown }[] }).items;
    assert.equal(items.length, 2);
    assert.equal(items[0]!.ip, "81.2.69.142");
    assert.ok(items[1]!.error, "a bad address fails only its item");

    const risk = await call(client, "explain_risk", { ip: "81.2.69.142" });
    assert.ok(!risk.isError, risk.content[0]?.text);
    assert.ok("security" in risk.structuredContent! && "risk" in risk.structuredContent!);

    const status = await call(client, "data_status");
    assert.ok(!status.isError, status.content[0]?.text);
    assert.ok(Array.isArray((status.structuredContent as { sources: unknown[] }).sources));

    const noPolicy = await call(client, "policy_decision", { ip: "81.2.69.142" });
    assert.equal(noPolicy.isError, true);
    assert.match(noPolicy.content[0]!.text, /No forward-auth policy/);

    const bad = await call(client, "lookup_ip", { ip: "1.2.3" });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0]!.text, /Invalid IP address "1\.2\.3"/);

    const badLang = await call(client, "lookup_ip", { ip: "81.2.69.142", lang: "xx" });
    assert.equal(badLang.isError, true);

    const wrongType = await call(client, "lookup_ip", { ip: 42 });
    assert.equal(wrongType.isError, true, "a schema violation is a tool error");

    const unknown = await call(client, "no_such_tool", {});
    assert.equal(unknown.isError, true);
    assert.match(unknown.content[0]!.text, /no_such_tool/);
  } finally {
    await client.close();
  }
});

Deno.test("without a key /mcp answers 401 where keys are required; a spent limit is a tool error", async () => {
  const { app, key } = await keyedApp(2);
  await assert.rejects(connect(app, null), /401|Invalid or missing API key/);
  const raw = await app.fetch(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    }),
    peer("203.0.113.7"),
  );
  assert.equal(raw.status, 401);
  assert.equal((await raw.json()).success, false);

  const client = await connect(app, key);
  try {
    assert.ok(!(await call(client, "lookup_ip", { ip: "81.2.69.142" })).isError);
    const second = await call(client, "lookup_ip", { ip: "81.2.69.142", get: "asn_number" });
    assert.ok(!second.isError, second.content[0]?.text);
    const third = await call(client, "lookup_ip", { ip: "81.2.69.142" });
    assert.equal(third.isError, true);
    assert.match(third.content[0]!.text, /rate limit/i);
  } finally {
    await client.close();
  }
});

Deno.test("IPINTEL_MCP=false answers 404 at /mcp; GET /mcp is a 405 naming POST", async () => {
  const { app, key } = await keyedApp(100, { mcp: false });
  const post = await app.fetch(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    }),
    peer("203.0.113.7"),
  );
  assert.equal(post.status, 404);
  assert.match((await post.json()).message, /IPINTEL_MCP/);
  const get = await app.fetch(
    new Request("http://localhost/mcp", { headers: { authorization: `Bearer ${key}` } }),
    peer("203.0.113.7"),
  );
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST, OPTIONS");
  await get.body?.cancel();
});

Deno.test("on the real default data, lookup_ip over HTTP with a key gives 8.8.8.8's country and ASN", async () => {
  const { app, key } = await keyedApp(100, {}, await openDataSet(DEFAULT_DATA_DIR));
  const client = await connect(app, key);
  try {
    const answer = await call(client, "lookup_ip", { ip: "8.8.8.8" });
    const data = answer.structuredContent as {
      geoLocation: { countryCode: string };
      connection: { asn_number: number; asn_org: string };
    };
    assert.equal(data.geoLocation.countryCode, "US");
    assert.equal(data.connection.asn_number, 15169);
    assert.equal(data.connection.asn_org, "Google LLC");
  } finally {
    await client.close();
  }
});
