/** The stdio MCP server of `ipintel mcp` (mcp.ts), loaded only when that command runs. */

import type { Config } from "../../base/config.ts";
import { createAsnView } from "../../core/asn/view.ts";
import { statusData } from "../../service/app/status_route.ts";
import { LineTransport } from "../../service/mcp/line_transport.ts";
import { createMcpServer } from "../../service/mcp/tools.ts";
import { PolicyGate } from "../../service/policy/gate.ts";
import { openServed } from "../server/served.ts";

/**
 * Serves the tools over stdio until the assistant closes standard input and
 * every request received has its answer written (a tool may still be working
 * when it does); the exit status: 0, or 1 when standard output broke.
 */
export async function runMcpOverStdio(config: Config): Promise<number> {
  const served = await openServed(config);
  const report = (line: string) => console.error(line);
  const policy = config.policy ? await PolicyGate.open(config.policy, { report }) : null;
  const started = new Date();
  const server = createMcpServer({
    served: () => served,
    charge: () => Promise.resolve(null),
    bulkMax: config.bulkMax,
    policy,
    asnView: createAsnView(),
    status: () =>
      Promise.resolve(
        statusData(served.data, {
          started,
          now: new Date(),
          readOnly: null,
          policy,
          detail: config.statusDetail,
        }),
      ),
    logError: (error) => console.error(error),
  });
  // Our own line reader in front of the SDK: bounded lines, a bad one answered, never fatal.
  const transport = new LineTransport(Deno.stdin.readable, Deno.stdout.writable, report);
  await server.connect(transport);
  await transport.finished;
  await server.close();
  policy?.close();
  if (transport.writeFailure) {
    report(`ipintel mcp: writing standard output failed: ${transport.writeFailure.message}`);
    return 1;
  }
  return 0;
}
