/** docs/mcp.md states the limits the code enforces, and its commands run as written. */

import assert from "node:assert/strict";
import {
  MCP_BATCH_MAX,
  MCP_DEPTH_MAX,
  MCP_MESSAGE_LIMIT,
} from "../../../src/service/mcp/envelope.ts";
import { USER_AGENT_MAX } from "../../../src/service/mcp/arguments.ts";

const docs = await Deno.readTextFile(new URL("../../../docs/mcp.md", import.meta.url));

Deno.test("docs/mcp.md states the body and line limit, the batch bound, the depth and the userAgent bound", () => {
  assert.equal(MCP_MESSAGE_LIMIT, 1024 * 1024);
  assert.match(docs, /body of more than \*\*1 MiB\*\* \(1,048,576 bytes\)/);
  assert.match(docs, /a line of more than \*\*1 MiB\*\*/);
  assert.match(
    docs,
    new RegExp(`batch \\(a JSON array\\) of 1 to\\s+\\*\\*${MCP_BATCH_MAX}\\*\\*`),
  );
  assert.match(docs, new RegExp(`nested at most \\*\\*${MCP_DEPTH_MAX}\\*\\* levels`));
  assert.match(docs, new RegExp(`more than ${USER_AGENT_MAX.toLocaleString("en-US")} characters`));
});

Deno.test("docs/mcp.md's keys create example names the key with --name", () => {
  const examples = [...docs.matchAll(/ipintel keys create[^`\n]*/g)].map((m) => m[0]);
  assert.ok(examples.length > 0);
  for (const example of examples) assert.match(example, /--name \S+/, example);
});
