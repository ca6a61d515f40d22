/** An app with keys required, the SDK's client connected to its /mcp, and a raw POST to it. */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { App } from "../../../src/service/app/app.ts";
import type { AppDeps } from "../../../src/service/app/app_tools.ts";
import type { DataSet } from "../../../src/data/sources/data_set.ts";
import { fixtureApp, keyRequiredAccess, peer } from "../../_helpers.ts";

/** An app whose keys are required, with one key of `limit` requests a minute. */
export async function keyedApp(
  limit: number,
  config: { mcp?: boolean; statusDetail?: boolean } = {},
  data?: DataSet,
  deps: Partial<Pick<AppDeps, "logError" | "policy">> = {},
) {
  const { access, key } = await keyRequiredAccess("analyst", limit);
  return { app: await fixtureApp({ access, config, data, ...deps }), key };
}

/** The SDK's client, connected to `app` at /mcp with `key` (none: no Authorization). */
export async function connect(app: App, key: string | null): Promise<Client> {
  const client = new Client({ name: "ipintel-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : undefined,
    fetch: (input: string | URL, init?: RequestInit) =>
      Promise.resolve(app.fetch(new Request(input, init), peer("203.0.113.7"))),
  });
  await client.connect(transport);
  return client;
}

export type ToolAnswer = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
};

/** Calls tool `name` through the SDK's client. */
export const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  await client.callTool({ name, arguments: args }) as ToolAnswer;

/** POSTs `body` to /mcp as a client would (JSON, accepting JSON), headers overridable (null: none). */
export async function postMcp(
  app: App,
  key: string | null,
  body: BodyInit | null,
  headers: Record<string, string | null> = {},
): Promise<Response> {
  const sent = Object.entries({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...headers,
  }).filter((entry): entry is [string, string] => entry[1] !== null);
  return await app.fetch(
    new Request("http://localhost/mcp", { method: "POST", headers: sent, body }),
    peer("203.0.113.7"),
  );
}

/** A `tools/call` request of `name` with `args`. */
export const toolCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});
