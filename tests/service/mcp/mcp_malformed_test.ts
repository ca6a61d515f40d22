/**
 * Every malformed request to /mcp is a 4xx (or a JSON-RPC error in a 200)
 * naming what is wrong: never a 5xx, never logged as a server error.
 */

import assert from "node:assert/strict";
import { MCP_DEPTH_MAX } from "../../../src/service/mcp/envelope.ts";
import { keyedApp, postMcp, toolCall } from "./_mcp_app.ts";

const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

interface Case {
  name: string;
  body: BodyInit;
  headers?: Record<string, string>;
  status: number;
  /** The JSON-RPC error code; null: the API's envelope `{success: false, message}`. */
  code: number | null;
  message: RegExp;
}

const CASES: Case[] = [
  { name: "not JSON", body: "nope", status: 400, code: -32700, message: /Parse error/ },
  { name: "empty", body: "", status: 400, code: -32700, message: /empty/ },
  { name: "a bare number", body: "42", status: 400, code: -32600, message: /got a number/ },
  { name: "a bare string", body: '"hi"', status: 400, code: -32600, message: /got a string/ },
  {
    name: 'jsonrpc "1.0"',
    body: JSON.stringify({ ...list, jsonrpc: "1.0" }),
    status: 400,
    code: -32600,
    message: /"jsonrpc" must be "2\.0", got "1\.0"/,
  },
  {
    name: "jsonrpc missing",
    body: JSON.stringify({ id: 1, method: "tools/list" }),
    status: 400,
    code: -32600,
    message: /"jsonrpc" must be "2\.0", got none/,
  },
  {
    name: "id null",
    body: JSON.stringify({ ...list, id: null }),
    status: 400,
    code: -32600,
    message: /"id" must be a string or an integer, got null/,
  },
  {
    name: "id an object",
    body: JSON.stringify({ ...list, id: {} }),
    status: 400,
    code: -32600,
    message: /got an object/,
  },
  {
    name: "id a fraction",
    body: JSON.stringify({ ...list, id: 1.5 }),
    status: 400,
    code: -32600,
    message: /got a number/,
  },
  {
    name: "params an array",
    body: JSON.stringify({ ...list, params: [] }),
    status: 400,
    code: -32600,
    message: /"params" must be an object, got an array/,
  },
  {
    name: "_meta nested 100,000 deep",
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${deep(100_000)}}}`,
    status: 400,
    code: -32600,
    message: new RegExp(`nested more than ${MCP_DEPTH_MAX} levels`),
  },
  {
    name: "_meta a string",
    body: JSON.stringify({ ...list, params: { _meta: "x" } }),
    status: 400,
    code: -32600,
    message: /"params\._meta" must be an object/,
  },
  { name: "an empty batch", body: "[]", status: 400, code: -32600, message: /empty batch/ },
  {
    name: "a response",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} }),
    status: 400,
    code: -32600,
    message: /a response/,
  },
  {
    name: "an unknown member",
    body: JSON.stringify({ ...list, extra: 1 }),
    status: 400,
    code: -32600,
    message: /extra/,
  },
  {
    name: "one id twice in a batch",
    body: JSON.stringify([list, list]),
    status: 400,
    code: -32600,
    message: /id 1 is used twice \(message 2 of the batch\)/,
  },
  {
    name: "tools/call without a name",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} }),
    status: 400,
    code: -32602,
    message: /Invalid params of "tools\/call": "params\.name"/,
  },
  {
    name: "initialize without params",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" }),
    status: 400,
    code: -32602,
    message: /Invalid params of "initialize"/,
  },
  {
    name: "initialize in a batch",
    body: JSON.stringify([{
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }, { ...list, id: 2 }]),
    status: 400,
    code: -32600,
    message: /Only one initialization request/,
  },
  {
    name: "a bad MCP-Protocol-Version",
    body: JSON.stringify(list),
    headers: { "mcp-protocol-version": "1999-01-01" },
    status: 400,
    code: -32600,
    message: /unsupported MCP-Protocol-Version "1999-01-01": use one of .*2025-06-18/,
  },
  {
    name: "no Content-Type",
    body: new TextEncoder().encode(JSON.stringify(list)),
    status: 415,
    code: null,
    message: /Unsupported Content-Type \(none\)/,
  },
  {
    name: "Content-Type text/plain",
    body: JSON.stringify(list),
    headers: { "content-type": "text/plain" },
    status: 415,
    code: null,
    message: /Unsupported Content-Type "text\/plain"/,
  },
  {
    name: "a gzip Content-Encoding",
    body: JSON.stringify(list),
    headers: { "content-encoding": "gzip" },
    status: 415,
    code: null,
    message: /Unsupported Content-Encoding "gzip"/,
  },
  {
    name: "Accept text/html",
    body: JSON.stringify(list),
    headers: { accept: "text/html" },
    status: 406,
    code: -32600,
    message: /Not acceptable: Accept "text\/html"/,
  },
];

Deno.test("every malformed request to /mcp is a 4xx naming the fault, never a 5xx or a logged error", async () => {
  const logged: unknown[] = [];
  const { app, key } = await keyedApp(100, {}, undefined, { logError: (e) => logged.push(e) });
  for (const c of CASES) {
    // A Uint8Array body carries no Content-Type of its own: "no Content-Type" sends none.
    const headers = c.body instanceof Uint8Array ? { "content-type": null } : c.headers;
    const response = await postMcp(app, key, c.body, headers);
    assert.equal(response.status, c.status, c.name);
    const body = await response.json();
    if (c.code === null) {
      assert.equal(body.success, false, c.name);
      assert.match(body.message, c.message, c.name);
    } else {
      assert.equal(body.jsonrpc, "2.0", c.name);
      assert.equal(body.error.code, c.code, c.name);
      assert.match(body.error.message, c.message, c.name);
    }
  }
  assert.deepEqual(logged, [], "nothing was logged as a server error");
});

Deno.test("JSON-RPC faults past the envelope are answered in a 200: an unknown method, a request cancelled in its batch", async () => {
  const logged: unknown[] = [];
  const { app, key } = await keyedApp(100, {}, undefined, { logError: (e) => logged.push(e) });
  const unknown = await postMcp(app, key, JSON.stringify({ ...list, method: "resources/list" }));
  assert.equal(unknown.status, 200);
  assert.equal((await unknown.json()).error.code, -32601);
  // The cancellation names a request of the same batch: the request is still answered.
  const cancelled = await postMcp(
    app,
    key,
    JSON.stringify([
      toolCall(7, "lookup_ip", { ip: "81.2.69.142", get: "country" }),
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } },
    ]),
  );
  assert.equal(cancelled.status, 200);
  // A batch is answered with an array, one request's answer in it.
  const answers = await cancelled.json();
  assert.ok(Array.isArray(answers));
  const [answer] = answers;
  assert.equal(answer.id, 7);
  assert.equal(answer.result.structuredContent.country, "United Kingdom");
  assert.deepEqual(logged, []);
});
