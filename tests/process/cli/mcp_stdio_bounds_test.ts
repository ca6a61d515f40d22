/**
 * `ipintel mcp` survives what an assistant (or a broken pipe) may send: a
 * line past the message limit, a line that is not JSON, a batch, a malformed
 * message are each answered with a JSON-RPC error and the session goes on;
 * a cancelled request does not hold the exit; the exit status is 0 once
 * standard input ends and every answer is written.
 */

import assert from "node:assert/strict";
import { MCP_MESSAGE_LIMIT } from "../../../src/service/mcp/envelope.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";
import { runCli } from "../../_cli.ts";

const ENV = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" };
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "pipe", version: "1" },
  },
};
const lookup = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "lookup_ip", arguments: { ip: "8.8.8.8", get: "countryCode" } },
});

type Answer = {
  id: number | null;
  result?: { structuredContent?: unknown };
  error?: { code: number; message: string };
};

Deno.test("ipintel mcp answers an 11 MiB line, a line not JSON, a batch and a bad message with JSON-RPC errors, then serves the next request", async () => {
  const long = "x".repeat(11 * 1024 * 1024);
  const lines = [
    JSON.stringify(INITIALIZE),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    long,
    "not json",
    JSON.stringify([lookup(3)]),
    JSON.stringify({ ...lookup(4), jsonrpc: "1.0" }),
    "",
    JSON.stringify(lookup(5)),
  ];
  const { code, stdout, stderr } = await runCli(["mcp"], ENV, 120_000, lines.join("\n") + "\n");
  assert.equal(code, 0, stderr);
  const answers = stdout.trim().split("\n").map((line) => JSON.parse(line) as Answer);
  assert.deepEqual(answers.map((a) => [a.id, a.error?.code ?? null]), [
    [1, null],
    [null, -32600],
    [null, -32700],
    [null, -32600],
    [4, -32600],
    [5, null],
  ]);
  assert.equal(
    answers[1]!.error!.message,
    `Invalid request: a line of ${long.length} bytes, more than the limit of ${MCP_MESSAGE_LIMIT}`,
  );
  assert.match(answers[3]!.error!.message, /one message a line, not a batch/);
  assert.match(answers[4]!.error!.message, /"jsonrpc" must be "2\.0", got "1\.0"/);
  assert.deepEqual(answers[5]!.result!.structuredContent, { ip: "8.8.8.8", countryCode: "US" });
  assert.match(stderr, new RegExp(`refused a line of ${long.length} bytes`));
});

Deno.test("ipintel mcp exits 0 at the end of its input when a request in progress was cancelled", async () => {
  const lines = [
    JSON.stringify(INITIALIZE),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    // The ASN index is built on this first question: still in progress when the cancellation comes.
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "asn", arguments: { n: 15169 } },
    }),
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2, reason: "the user moved on" },
    }),
    JSON.stringify(lookup(3)),
  ];
  const { code, stdout, stderr } = await runCli(["mcp"], ENV, 120_000, lines.join("\n") + "\n");
  assert.equal(code, 0, stderr);
  const answers = stdout.trim().split("\n").map((line) => JSON.parse(line) as Answer);
  assert.deepEqual(answers.map((a) => a.id), [1, 3], "the cancelled request gets no answer");
});
