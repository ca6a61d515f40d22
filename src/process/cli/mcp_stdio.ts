/** The stdio MCP server of `ipintel mcp` (mcp.ts), loaded only when that command runs. */

import process from "node:process";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Config } from "../../base/config.ts";
import { createAsnView } from "../../core/asn/view.ts";
import { statusData } from "../../service/app/status_route.ts";
import { createMcpServer } from "../../service/mcp/tools.ts";
import { PolicyGate } from "../../service/policy/gate.ts";
import { openServed } from "../server/served.ts";

/** A JSON-RPC message as the transport passes it on. */
type Message = Record<string, unknown>;

/** Serves the tools over stdio until the assistant closes standard input; the exit status. */
export async function runMcpOverStdio(config: Config): Promise<number> {
  const served = await openServed(config);
  const policy = config.policy
    ? await PolicyGate.open(config.policy, { report: (line) => console.error(line) })
    : null;
  const started = new Date();
  const server = createMcpServer({
    served: () => served,
    charge: () => Promise.resolve(null),
    bulkMax: config.bulkMax,
    policy,
    asnView: createAsnView(),
    status: () =>
      Promise.resolve(
        statusData(served.data, { started, now: new Date(), readOnly: null, policy, detail: true }),
      ),
    logError: (error) => console.error(error),
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // The SDK's transport reads node's process.stdin; the assistant closing it ends the session,
  // once every request received has its answer written (a tool may still be working).
  let pending = 0;
  let ended = false;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => done = resolve);
  const received = transport.onmessage!;
  transport.onmessage = (message: Message, extra?: unknown) => {
    if ("method" in message && "id" in message) pending++;
    received(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: Message, options?: unknown) => {
    await send(message, options);
    if (
      "id" in message && ("result" in message || "error" in message) && --pending === 0 && ended
    ) {
      done();
    }
  };
  const end = () => {
    ended = true;
    if (pending === 0) done();
  };
  process.stdin.once("end", end);
  process.stdin.once("close", end);
  await finished;
  await server.close();
  policy?.close();
  return 0;
}
