/**
 * `ipintel mcp`: the MCP server for an AI assistant that starts a local
 * command, over stdio (JSON-RPC on standard input and output). It reads the
 * local data directly, as `ipintel lookup` does: no server, no key, no limit,
 * nothing leaves the machine. Standard output carries only the protocol;
 * anything else goes to standard error.
 */

import { defineCommand } from "./command.ts";

export const mcpCommand = defineCommand({
  summary: "Serve the MCP tools to an AI assistant over stdio, from the local data",
  details: "Tools: lookup_ip, lookup_many, explain_risk, asn, policy_decision (with " +
    "IPINTEL_POLICY), data_status. Add it to an assistant as a local command: " +
    "`deno task ipintel mcp` or, from a binary, `ipintel mcp` (docs/mcp.md). It runs until " +
    "standard input closes.",
  settings: ["dataDir", "sourcesFile", "cacheSize", "bulkMax", "policy", "statusDetail"],
  // The SDK is loaded only by this command: the others start without it.
  run: async ({ config }) => (await import("./mcp_stdio.ts")).runMcpOverStdio(config),
});
