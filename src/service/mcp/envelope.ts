/**
 * The JSON-RPC envelope both MCP doors (`/mcp` and `ipintel mcp`) check
 * before the SDK sees a message: the size, the nesting depth, the batch
 * length, each message's shape and the params of the methods served. A
 * message the SDK would choke on (a 500 over HTTP, a closed transport over
 * stdio) is refused here with the JSON-RPC error naming what is wrong.
 */

import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { quoteInput } from "../../base/errors.ts";

/** Most bytes in one HTTP body or one stdio line: a full `lookup_many` list fits many times. */
export const MCP_MESSAGE_LIMIT = 1024 * 1024;
/** Most messages in one batch (a JSON array): each answer of `tools/list` is about 3 KB. */
export const MCP_BATCH_MAX = 32;
/** Deepest nesting of arrays and objects in a message (a tool's arguments need a handful). */
export const MCP_DEPTH_MAX = 32;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

/** A JSON-RPC message as the SDK takes it. */
export type RpcMessage = Record<string, unknown>;
export type RpcId = string | number;

/** Why a message (or a whole body) is refused: a JSON-RPC error, with the id when it was readable. */
export class RpcFailure {
  constructor(
    readonly code: typeof PARSE_ERROR | typeof INVALID_REQUEST | typeof INVALID_PARAMS,
    readonly message: string,
    readonly id: RpcId | null = null,
  ) {}
}

/** The messages of one body or line, checked; `batch` when they came as an array. */
export interface RpcMessages {
  messages: RpcMessage[];
  batch: boolean;
}

/** The JSON-RPC error object of `failure`. */
export function rpcError(failure: RpcFailure) {
  return {
    jsonrpc: "2.0" as const,
    id: failure.id,
    error: { code: failure.code, message: failure.message },
  };
}

/** Refuses an `MCP-Protocol-Version` header the SDK does not speak (absent: the default). */
export function checkProtocolVersion(header: string | null): RpcFailure | null {
  if (header === null || SUPPORTED_PROTOCOL_VERSIONS.includes(header)) return null;
  return invalid(
    `unsupported MCP-Protocol-Version ${quoteInput(header)}: use one of ${
      SUPPORTED_PROTOCOL_VERSIONS.join(", ")
    }`,
    null,
  );
}

/** Refuses (for a 406) an Accept header that takes neither JSON nor an event stream (absent: any). */
export function checkAccept(header: string | null): RpcFailure | null {
  if (header === null || /application\/json|text\/event-stream|\*\/\*/i.test(header)) return null;
  return new RpcFailure(
    INVALID_REQUEST,
    `Not acceptable: Accept ${
      quoteInput(header)
    } takes neither application/json nor text/event-stream`,
  );
}

/**
 * Parses and checks the text of one body or line: the messages, or the
 * failure to answer instead (the whole body or line is refused: no message
 * of a batch with a bad one runs).
 */
export function parseMessages(text: string): RpcMessages | RpcFailure {
  if (text.trim() === "") {
    return new RpcFailure(PARSE_ERROR, "Parse error: the message is empty");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return new RpcFailure(PARSE_ERROR, `Parse error: ${(error as Error).message}`);
  }
  if (tooDeep(value)) {
    return invalid(`nested more than ${MCP_DEPTH_MAX} levels deep`, null);
  }
  const batch = Array.isArray(value);
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0) return invalid("an empty batch", null);
  if (list.length > MCP_BATCH_MAX) {
    return invalid(
      `a batch of ${list.length} messages: send at most ${MCP_BATCH_MAX} in one batch`,
      null,
    );
  }
  const ids = new Set<RpcId>();
  const messages: RpcMessage[] = [];
  for (const [index, item] of list.entries()) {
    const where = batch ? ` (message ${index + 1} of the batch)` : "";
    const checked = checkMessage(item, where);
    if (checked instanceof RpcFailure) return checked;
    if ("id" in checked) {
      const id = checked.id as RpcId;
      if (ids.has(id)) return invalid(`id ${JSON.stringify(id)} is used twice${where}`, id);
      ids.add(id);
    }
    messages.push(checked);
  }
  return { messages, batch };
}

/** Params each served method takes (others are answered "Method not found" by the SDK). */
const PARAMS = new Map<
  string,
  { safeParse(value: unknown): { success: boolean; error?: unknown } }
>(
  [
    ["initialize", InitializeRequestSchema],
    ["ping", PingRequestSchema],
    ["tools/list", ListToolsRequestSchema],
    ["tools/call", CallToolRequestSchema],
  ],
);

/** One message checked: the message, or its failure. */
function checkMessage(item: unknown, where: string): RpcMessage | RpcFailure {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    return invalid(`expected a JSON-RPC object, got ${kindOf(item)}${where}`, null);
  }
  const message = item as RpcMessage;
  const id = message.id;
  const goodId = typeof id === "string" || Number.isSafeInteger(id);
  const echoId = goodId ? id as RpcId : null;
  if (message.jsonrpc !== "2.0") {
    const value = message.jsonrpc;
    const got = value === undefined
      ? "none"
      : typeof value === "string"
      ? quoteInput(value)
      : kindOf(value);
    return invalid(`"jsonrpc" must be "2.0", got ${got}${where}`, echoId);
  }
  if (!("method" in message)) {
    const what = "result" in message || "error" in message
      ? "a response, but this server sends no requests"
      : 'no "method"';
    return invalid(`${what}${where}`, echoId);
  }
  if (typeof message.method !== "string" || message.method === "") {
    return invalid(`"method" must be a non-empty string${where}`, echoId);
  }
  if ("id" in message && !goodId) {
    return invalid(
      `"id" must be a string or an integer, got ${kindOf(id)}${where}`,
      null,
    );
  }
  const params = message.params;
  if (
    params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))
  ) {
    return invalid(`"params" must be an object, got ${kindOf(params)}${where}`, echoId);
  }
  const meta = (params as RpcMessage | undefined)?._meta;
  if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
    return invalid(`"params._meta" must be an object, got ${kindOf(meta)}${where}`, echoId);
  }
  const schema = "id" in message ? JSONRPCRequestSchema : JSONRPCNotificationSchema;
  const shape = schema.safeParse(message);
  if (!shape.success) return invalid(`${firstIssue(shape.error)}${where}`, echoId);
  if ("id" in message) {
    const paramsSchema = PARAMS.get(message.method);
    const parsed = paramsSchema?.safeParse(message);
    if (parsed && !parsed.success) {
      const issue = firstIssue(parsed.error);
      return new RpcFailure(
        INVALID_PARAMS,
        `Invalid params of ${quoteInput(message.method)}: ${issue}${where}`,
        echoId,
      );
    }
  }
  return message;
}

function invalid(what: string, id: RpcId | null): RpcFailure {
  return new RpcFailure(INVALID_REQUEST, `Invalid request: ${what}`, id);
}

/** The first of a zod error's issues, as `path: message`. */
function firstIssue(error: unknown): string {
  const issue = (error as { issues?: { path: PropertyKey[]; message: string }[] }).issues?.[0];
  if (!issue) return "malformed";
  const path = issue.path.map(String).join(".");
  return path ? `${quoteInput(path)}: ${issue.message}` : issue.message;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Whether `value` nests arrays and objects deeper than MCP_DEPTH_MAX (walked without recursion). */
function tooDeep(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= MCP_DEPTH_MAX) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
