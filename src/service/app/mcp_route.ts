/**
 * `POST /mcp`: the MCP server (src/service/mcp/tools.ts) over Streamable
 * HTTP, stateless (every POST its own session). What reaches the SDK is
 * bounded and checked first, in this order: the key (401, before the
 * handler), the caller's admission (429 for a spent key, before a byte of
 * the body is read), the headers (415, 406, 400), the body read up to its
 * limit (413), the JSON-RPC envelope (400 with a JSON-RPC error: parse
 * error, invalid request, invalid params). Each tool call is then charged as
 * it runs, as the same call alone would be.
 */

import { HTTPException } from "hono/http-exception";
import { AppError } from "../../base/errors.ts";
import { readBoundedBody, requireJsonContentType } from "../http/body.ts";
import { bodyStream, FORMAT_HEADERS } from "../http/env.ts";
import type { Handler } from "../http/route.ts";
import { statusData } from "./status_route.ts";
import type { AppTools } from "./app_tools.ts";

/** The handler of `POST /mcp`. */
export function mcpHandler(tools: AppTools): Handler {
  const { deps, asnView } = tools;
  const started = new Date();
  return async (c) => {
    if (deps.config.mcp === false) {
      throw new AppError("not_found", "No MCP server: IPINTEL_MCP is off");
    }
    // A batch's cost is known only once it is read: a spent key is refused before that.
    const refusal = tools.admission.admit(c, c.get("caller"));
    if (refusal) throw refusal;
    const headers = c.req.raw.headers;
    requireJsonContentType(headers);
    // Loaded on the first call: a server no assistant talks to never loads the SDK.
    const [envelope, { createMcpServer }, { StreamableHTTPTransport }] = await Promise.all([
      import("../mcp/envelope.ts"),
      import("../mcp/tools.ts"),
      import("@hono/mcp"),
    ]);
    const rpcAnswer = (status: 400 | 406, failure: InstanceType<typeof envelope.RpcFailure>) =>
      c.body(JSON.stringify(envelope.rpcError(failure)), status, FORMAT_HEADERS.json);
    const accept = envelope.checkAccept(headers.get("accept"));
    if (accept) return rpcAnswer(406, accept);
    const version = envelope.checkProtocolVersion(headers.get("mcp-protocol-version"));
    if (version) return rpcAnswer(400, version);
    const body = await readBoundedBody(
      { headers, stream: bodyStream(c) },
      envelope.MCP_MESSAGE_LIMIT,
    );
    const parsed = envelope.parseMessages(new TextDecoder().decode(body));
    if (parsed instanceof envelope.RpcFailure) return rpcAnswer(400, parsed);
    // Stateless: a cancellation can name no request of an earlier POST, and one of the same
    // batch would leave its answer missing (the POST would never end).
    const messages = parsed.messages.filter((m) => m.method !== "notifications/cancelled");
    if (messages.length === 0) return c.body(null, 202);

    const server = createMcpServer({
      served: () => tools.served(c),
      charge: async (units) => await tools.admission.charge(c, c.get("caller"), units),
      bulkMax: tools.bulkMax,
      policy: deps.policy ?? null,
      asnView,
      status: async () =>
        statusData(tools.served(c).data, {
          started,
          now: new Date(),
          readOnly: await deps.dataDirectory?.() ?? null,
          policy: deps.policy ?? null,
          detail: deps.config.statusDetail ?? false,
        }),
      logError: (error) => tools.logError(error, c),
    });
    const transport = new StreamableHTTPTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      const answer = await transport.handleRequest(c, parsed.batch ? messages : messages[0]);
      if (!answer) return c.body(null, 202);
      // JSON-RPC answers a batch with an array; the SDK answers a batch of one request with
      // that answer alone.
      if (parsed.batch && answer.status === 200) {
        const text = await answer.text();
        return c.body(text.startsWith("[") ? text : `[${text}]`, 200, FORMAT_HEADERS.json);
      }
      return answer;
    } catch (error) {
      // The SDK's own refusals (checked above already): its 4xx as it made it, never a 500.
      if (error instanceof HTTPException) return error.getResponse();
      throw error;
    } finally {
      await server.close();
    }
  };
}
