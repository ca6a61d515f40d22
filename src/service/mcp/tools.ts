/**
 * ipintel's Model Context Protocol server: the tools an analyst's AI
 * assistant calls, over the same lookup, history, AS view and policy the API
 * answers with, and the same keys and limits. Each tool has an input schema,
 * returns its answer as structured content (and as JSON text, for clients
 * that read only text), and reports a failure as a tool error carrying the
 * API's own message: never a protocol failure.
 *
 * The server over HTTP (`/mcp`, src/service/app/routes.ts) and over stdio
 * (`ipintel mcp`, src/process/cli/mcp.ts) differ only in their `McpAccess`.
 */

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { VERSION } from "../../base/config.ts";
import { AppError, BadRequestError } from "../../base/errors.ts";
import type { Json } from "../../base/types.ts";
import { parseAsnSelection } from "../../core/asn/layout.ts";
import { asnCost, type AsnView } from "../../core/asn/view.ts";
import { renderLookup } from "../../core/format/render.ts";
import type { FieldSelection } from "../../core/format/select.ts";
import { lookupItem } from "../../core/lookup/item.ts";
import type { Served } from "../http/env.ts";
import type { PolicyGate } from "../policy/gate.ts";
import { judge } from "../policy/decide.ts";
import { decisionJson } from "../policy/decision_json.ts";
import {
  asNumberText,
  checkAddress,
  type LookupArguments,
  lookupOptionsOf,
  USER_AGENT_MAX,
} from "./arguments.ts";

/** What the tools answer from, and how a call is charged: the transport's part. */
export interface McpAccess {
  /** The data set and lookup serving now; throws DataUnavailableError (503) while loading. */
  served(): Served;
  /** Charges `units` to the caller: the 429 to answer, or null (always null over stdio). */
  charge(units: number): Promise<AppError | null>;
  /** Most addresses `lookup_many` takes (IPINTEL_BULK_MAX). */
  bulkMax: number;
  /** The forward-auth policy, where one is configured. */
  policy: PolicyGate | null;
  /** The AS view (its index built once per data set). */
  asnView: AsnView;
  /** What `data_status` answers: sources, ages, data version. */
  status(): Promise<Json>;
  /** Where an unexpected failure's detail goes (the tool answers a generic message). */
  logError(error: unknown): void;
}

/** Names and descriptions of the tools, in the order `tools/list` gives them. */
export const TOOL_DESCRIPTIONS = {
  lookup_ip:
    "Geolocation, time zone, currency, network (ASN, ISP) and security flags (Tor, VPN, proxy, hosting, threat lists) of one IP address, from the self-hosted ipintel data; optionally as the security lists stood at a past time.",
  lookup_many:
    "The same as lookup_ip for a list of IP addresses; a bad address fails only its item.",
  explain_risk:
    "Why an IP address is or is not risky: the risk score with its reasons, the security lists naming it, and when each first and last listed it.",
  asn:
    "An autonomous system by number (15169 or AS15169): its name, country, IPv4 and IPv6 prefixes, counts, and the security lists naming part of it.",
  policy_decision:
    "What the forward-auth policy (/auth) would decide for an IP address and why: allow or deny, the deciding rule, the conditions it matched and the address's facts (country, continent, AS, risk flags, isThreat), as `ipintel policy test --json` prints it.",
  data_status:
    "Which data sources are loaded, how old each is, their licences, which are absent, and the data version answers carry.",
} as const;

/** Builds an MCP server whose tools answer through `access`. */
export function createMcpServer(access: McpAccess): McpServer {
  const server = new McpServer({ name: "ipintel", version: VERSION });
  const charged = async (units: number) => {
    const refusal = await access.charge(units);
    if (refusal) throw refusal;
  };
  /** The `data` of the API's JSON answer to `result` under `selection`. */
  const dataOf = (result: Parameters<typeof renderLookup>[0], selection: FieldSelection | null) =>
    (JSON.parse(renderLookup(result, selection, "json")) as { data: Json }).data;
  // Every tool: the data (503 while loading), its arguments checked (400/404), then the charge.
  const lookupArgs = {
    get: z.string().optional().describe(
      "Comma-separated fields as the API's get parameter: country,asn_org,security,risk,...",
    ),
    lang: z.string().optional().describe("Language of place names (BCP 47), e.g. de"),
    at: z.string().optional().describe(
      "An ISO 8601 time or date: answer security and risk as the lists stood then",
    ),
  };
  const userAgentArg = z.string().optional().describe(
    `The client's User-Agent string, as the API's ua parameter (at most ${USER_AGENT_MAX} characters)`,
  );

  server.registerTool(
    "lookup_ip",
    {
      description: TOOL_DESCRIPTIONS.lookup_ip,
      inputSchema: {
        ip: z.string().describe("An IPv4 or IPv6 address, e.g. 8.8.8.8"),
        ...lookupArgs,
        userAgent: userAgentArg,
      },
    },
    (args: { ip: string } & LookupArguments) =>
      answer(access, async () => {
        const { data, lookup } = access.served();
        const options = lookupOptionsOf(args, data);
        checkAddress(args.ip);
        await charged(1);
        return dataOf(lookup.find(args.ip, options), options.selection);
      }),
  );

  server.registerTool(
    "lookup_many",
    {
      description: TOOL_DESCRIPTIONS.lookup_many,
      inputSchema: {
        ips: z.array(z.string()).min(1).describe("IPv4 or IPv6 addresses"),
        get: z.string().optional().describe("Comma-separated fields, as for lookup_ip"),
        lang: z.string().optional().describe("Language of place names (BCP 47)"),
        at: z.string().optional().describe("An ISO 8601 time or date, as for lookup_ip"),
      },
    },
    (args: { ips: string[]; get?: string; lang?: string; at?: string }) =>
      answer(access, async () => {
        if (args.ips.length > access.bulkMax) {
          throw new BadRequestError(
            `List of ${args.ips.length} addresses: give 1 to ${access.bulkMax} (IPINTEL_BULK_MAX)`,
          );
        }
        const { data, lookup } = access.served();
        const options = lookupOptionsOf(args, data);
        // One unit per address, as POST /bulk charges: a bad address fails only its item.
        await charged(args.ips.length);
        const items = args.ips.map((ip: string) => lookupItem(lookup, ip, options));
        // The API's bulk answer holds the items as `responseArray`.
        const { responseArray } = dataOf(items, options.selection) as { responseArray: Json[] };
        return { items: responseArray };
      }),
  );

  server.registerTool("explain_risk", {
    description: TOOL_DESCRIPTIONS.explain_risk,
    inputSchema: {
      ip: z.string().describe("An IPv4 or IPv6 address"),
      at: z.string().optional().describe("An ISO 8601 time or date: the lists as they stood then"),
      userAgent: userAgentArg,
    },
  }, (args: { ip: string; at?: string; userAgent?: string }) =>
    answer(access, async () => {
      const { data, lookup } = access.served();
      const options = lookupOptionsOf({ ...args, get: "security,risk" }, data);
      checkAddress(args.ip);
      await charged(1);
      return dataOf(lookup.find(args.ip, options), options.selection);
    }));

  server.registerTool("asn", {
    description: TOOL_DESCRIPTIONS.asn,
    inputSchema: {
      n: z.union([z.string(), z.number().int()]).describe("The AS number: 15169 or AS15169"),
      get: z.string().optional().describe(
        "Comma-separated names: asn, name, country, prefixes, counts, lists",
      ),
    },
  }, (args: { n: string | number; get?: string }) =>
    answer(access, async () => {
      const { data } = access.served();
      const selection = parseAsnSelection(args.get ?? null);
      const n = asNumberText(args.n);
      // Charged as /asn/{n} is: one unit, then one per 1,000 prefixes the answer holds.
      await charged(1);
      const rest = asnCost(await access.asnView.prefixes(n, data, selection)) - 1;
      if (rest > 0) await charged(rest);
      const rendered = await access.asnView.answer(n, data, selection, "json");
      return (JSON.parse(rendered.body) as { data: Json }).data;
    }));

  server.registerTool("policy_decision", {
    description: TOOL_DESCRIPTIONS.policy_decision,
    inputSchema: { ip: z.string().describe("An IPv4 or IPv6 address"), userAgent: userAgentArg },
  }, (args: { ip: string; userAgent?: string }) =>
    answer(access, async () => {
      if (!access.policy) {
        throw new AppError(
          "not_found",
          "No forward-auth policy: start the server with IPINTEL_POLICY (--policy) naming a policy file",
        );
      }
      const served = access.served();
      checkAddress(args.ip);
      // The crawler tags judge the user agent the gate would see.
      const { userAgent } = lookupOptionsOf({ userAgent: args.userAgent }, served.data);
      await charged(1);
      // Judged, not counted: an analyst's question is not a request the gate answered.
      // The same JSON as `ipintel policy test --json`.
      return decisionJson(
        judge(served, access.policy.loaded.policy, args.ip, userAgent),
      ) as unknown as Json;
    }));

  server.registerTool("data_status", {
    description: TOOL_DESCRIPTIONS.data_status,
    inputSchema: {},
  }, () => answer(access, () => access.status()));

  return server;
}

/** A tool's answer: `make`'s value as structured content and JSON text, or a tool error. */
async function answer(access: McpAccess, make: () => Promise<Json>) {
  try {
    const value = await make();
    const structured = (typeof value === "object" && value !== null && !Array.isArray(value))
      ? value
      : { value };
    return {
      content: [{ type: "text" as const, text: JSON.stringify(value) }],
      structuredContent: structured as Record<string, unknown>,
    };
  } catch (error) {
    if (!(error instanceof AppError)) access.logError(error);
    const message = error instanceof AppError ? error.message : "Internal server error";
    return { content: [{ type: "text" as const, text: message }], isError: true };
  }
}
