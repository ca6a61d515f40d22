/** The command line: `serve`, `data`, `lookup`, `keys`; `ipintel --help` lists them. */

import { asnCommand } from "./asn.ts";
import { type Command, runCommand } from "./command.ts";
import { dataCommand } from "./data.ts";
import { enrichCommand } from "./enrich.ts";
import { keysCommand } from "./keys.ts";
import { lookupCommand } from "./lookup.ts";
import { mcpCommand } from "./mcp.ts";
import { policyCommand } from "./policy.ts";
import { serveCommand } from "./serve.ts";

/** Every command; a group (`keys` → `create`, ...) is a command with `subcommands`. */
export const ROOT: Command = {
  summary: "ipintel: self-hosted IP intelligence (geolocation, network, time zone, user agent)",
  subcommands: {
    serve: serveCommand,
    data: dataCommand,
    lookup: lookupCommand,
    asn: asnCommand,
    enrich: enrichCommand,
    keys: keysCommand,
    policy: policyCommand,
    mcp: mcpCommand,
  },
};

/** Runs one command; returns the process exit status (0 done, 1 failed, 2 usage or configuration error). */
export function runCli(args: string[], env: Record<string, string | undefined>): Promise<number> {
  return runCommand(ROOT, args, env);
}
