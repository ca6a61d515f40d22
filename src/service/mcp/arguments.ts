/**
 * The MCP tools' arguments, checked as the HTTP API checks its query (the
 * same functions, so the same 400 messages), before a unit is charged: `get`,
 * `lang`, `at`, `userAgent`, the address and the AS number.
 */

import { BadRequestError } from "../../base/errors.ts";
import { parseIp } from "../../base/ip/parse.ts";
import { parseAsNumber } from "../../core/asn/number.ts";
import { type FieldSelection, parseFieldSelection } from "../../core/format/select.ts";
import type { LookupOptions } from "../../core/lookup/lookup.ts";
import { parseAt } from "../../data/history/at.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import { checkLang, UA_BODY_LIMIT } from "../http/lookup_request.ts";

/** Longest `userAgent` argument, in characters: the API's user-agent body limit. */
export const USER_AGENT_MAX = UA_BODY_LIMIT;

/** The optional arguments of the lookup tools, as the API's query parameters. */
export interface LookupArguments {
  get?: string;
  lang?: string;
  at?: string;
  userAgent?: string;
}

export type ToolLookupOptions = LookupOptions & { selection: FieldSelection | null };

/**
 * The lookup options of `args` on `data`: an unknown `get` name, a `lang`
 * the City database cannot answer in, a malformed `at` or an overlong
 * `userAgent` is a BadRequestError naming the value.
 */
export function lookupOptionsOf(args: LookupArguments, data: DataSet): ToolLookupOptions {
  const selection = parseFieldSelection(args.get ?? null);
  if (args.lang) checkLang(args.lang, data);
  const at = parseAt(args.at ?? null);
  const userAgent = args.userAgent ?? null;
  if (userAgent !== null && userAgent.length > USER_AGENT_MAX) {
    throw new BadRequestError(
      `Invalid userAgent: ${userAgent.length} characters, more than the limit of ${USER_AGENT_MAX}`,
    );
  }
  return { selection, lang: args.lang || null, userAgent, at };
}

/** Checks an address argument (InvalidIpError, 404, naming it) before anything is charged. */
export function checkAddress(ip: string): void {
  parseIp(ip);
}

/** The AS number argument (15169 or "AS15169") as the API's path gives it; a 400 naming it. */
export function asNumberText(n: string | number): string {
  const text = String(n);
  parseAsNumber(text);
  return text;
}
