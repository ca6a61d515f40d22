/**
 * /mcp bounds and charges before it works: the body limit (413, read no
 * further), a spent key refused before its body is read (429), the batch
 * bound, and each message of a batch charged as the same call alone.
 */

import assert from "node:assert/strict";
import { MCP_BATCH_MAX, MCP_MESSAGE_LIMIT } from "../../../src/service/mcp/envelope.ts";
import { keyedApp, postMcp, toolCall } from "./_mcp_app.ts";

/** A body of `total` bytes of `byte`, made as it is pulled; `pulled` counts what was read. */
function countingBody(total: number, chunk = 64 * 1024, fill = 0x20) {
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      const size = Math.min(chunk, total - counter.pulled);
      counter.pulled += size;
      controller.enqueue(new Uint8Array(size).fill(fill));
    },
  }, { highWaterMark: 0 });
  return { stream, counter };
}

/** `text`'s bytes as a stream that counts what is pulled. */
function countingText(text: string, chunk = 64 * 1024) {
  const bytes = new TextEncoder().encode(text);
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= bytes.length) return controller.close();
      const part = bytes.subarray(counter.pulled, counter.pulled + chunk);
      counter.pulled += part.length;
      controller.enqueue(part);
    },
  }, { highWaterMark: 0 });
  return { stream, counter };
}

const listBatch = (n: number) =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/list" })),
  );

Deno.test("an 8 MB body to /mcp is a 413 in the API's envelope, read no further than the limit", async () => {
  const { app, key } = await keyedApp(100);
  const { stream, counter } = countingBody(8 * 1000 * 1000);
  const response = await postMcp(app, key, stream);
  assert.equal(response.status, 413);
  const body = await response.json();
  assert.equal(body.success, false);
  assert.match(body.message, new RegExp(`larger than the limit of ${MCP_MESSAGE_LIMIT} bytes`));
  assert.ok(counter.pulled <= MCP_MESSAGE_LIMIT + 64 * 1024, `read ${counter.pulled} bytes`);
  // A declared length over the limit is refused unread.
  const declared = countingBody(8 * 1000 * 1000);
  const refused = await postMcp(app, key, declared.stream, { "content-length": "8000000" });
  assert.equal(refused.status, 413);
  assert.equal(declared.counter.pulled, 0);
  await refused.body?.cancel();
});

Deno.test("a spent key's batch of 20,000 calls is a 429 before a byte of it is read; /health still answers", async () => {
  const { app, key } = await keyedApp(1);
  const spend = await postMcp(
    app,
    key,
    JSON.stringify(toolCall(1, "lookup_ip", { ip: "81.2.69.142" })),
  );
  assert.equal(spend.status, 200);
  assert.equal(spend.headers.get("ratelimit-remaining"), "0");
  await spend.body?.cancel();

  const { stream, counter } = countingText(listBatch(20_000));
  const response = await postMcp(app, key, stream);
  assert.equal(response.status, 429);
  assert.ok(Number(response.headers.get("retry-after")) >= 1);
  assert.equal(response.headers.get("ratelimit-remaining"), "0");
  assert.match((await response.json()).message, /Rate limit exceeded/);
  assert.equal(counter.pulled, 0, "the body was not read");
  const health = await app.request("/health");
  assert.equal(health.status, 200);
  await health.body?.cancel();
});

Deno.test("a batch over the bound is a 400 with a JSON-RPC invalid request naming it; nothing is charged", async () => {
  const { app, key } = await keyedApp(5);
  const text = listBatch(20_000);
  assert.ok(text.length < MCP_MESSAGE_LIMIT, "the batch fits the body limit: the bound refuses it");
  const response = await postMcp(app, key, text);
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.id, null);
  assert.equal(body.error.code, -32600);
  assert.match(body.error.message, new RegExp(`20000 messages: send at most ${MCP_BATCH_MAX}`));
  const calls = Array.from(
    { length: MCP_BATCH_MAX + 1 },
    (_, i) => toolCall(i + 1, "lookup_ip", { ip: "81.2.69.142" }),
  );
  const over = await postMcp(app, key, JSON.stringify(calls));
  assert.equal(over.status, 400);
  await over.body?.cancel();
  // The whole budget is left.
  const after = await postMcp(
    app,
    key,
    JSON.stringify(toolCall(1, "lookup_ip", { ip: "81.2.69.142" })),
  );
  assert.equal(after.headers.get("ratelimit-remaining"), "4");
  await after.body?.cancel();
});

Deno.test("every call of a batch is charged as it would be alone: past the budget each is a tool error", async () => {
  const { app, key } = await keyedApp(3);
  const batch = [
    ...[1, 2, 3, 4, 5].map((id) =>
      toolCall(id, "lookup_ip", { ip: "81.2.69.142", get: "country" })
    ),
    { jsonrpc: "2.0", id: 6, method: "tools/list" },
    toolCall(7, "data_status"),
  ];
  const response = await postMcp(app, key, JSON.stringify(batch));
  assert.equal(response.status, 200);
  const answers = (await response.json()) as {
    id: number;
    result: { isError?: boolean; content?: { text: string }[]; tools?: unknown[] };
  }[];
  const byId = new Map(answers.map((a) => [a.id, a.result]));
  assert.equal(byId.size, 7, "one answer per request");
  const lookups = [1, 2, 3, 4, 5].map((id) => byId.get(id)!);
  assert.equal(lookups.filter((r) => !r.isError).length, 3, "three units, three lookups");
  for (const refused of lookups.filter((r) => r.isError)) {
    assert.match(refused.content![0]!.text, /Rate limit exceeded/);
  }
  assert.equal(byId.get(6)!.tools!.length, 6, "tools/list costs nothing, alone or in a batch");
  assert.ok(!byId.get(7)!.isError, "data_status costs nothing");
  assert.equal(response.headers.get("ratelimit-remaining"), "0");
});

Deno.test("a batch of calls that cost nothing is answered whole for a key with units left, none charged", async () => {
  const { app, key } = await keyedApp(2);
  const response = await postMcp(app, key, listBatch(MCP_BATCH_MAX));
  assert.equal(response.status, 200);
  assert.equal((await response.json()).length, MCP_BATCH_MAX);
  const after = await postMcp(
    app,
    key,
    JSON.stringify(toolCall(1, "lookup_ip", { ip: "81.2.69.142" })),
  );
  assert.equal(after.headers.get("ratelimit-remaining"), "1");
  await after.body?.cancel();
});
