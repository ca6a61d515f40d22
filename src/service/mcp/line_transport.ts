/**
 * The MCP transport of `ipintel mcp`: one JSON-RPC message a line in, one a
 * line out, in place of the SDK's stdio transport. A line past the message
 * limit, a line that is not JSON and a malformed message are each answered
 * with a JSON-RPC error and the session goes on; a cancelled request is no
 * longer awaited; `finished` settles once the input has ended and every
 * request still awaited has its answer written.
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  INVALID_REQUEST,
  MCP_MESSAGE_LIMIT,
  parseMessages,
  rpcError,
  RpcFailure,
  type RpcId,
  type RpcMessage,
} from "./envelope.ts";
import { boundedLines, LongLine } from "./lines.ts";

export class LineTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  /** Requests read and not yet answered (nor cancelled). */
  readonly #awaited = new Set<RpcId>();
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #writes: Promise<void> = Promise.resolve();
  #ended = false;
  #finish: () => void = () => {};
  /** Settles once the input ended and every awaited answer is written. */
  readonly finished: Promise<void>;
  /** Why the output could not be written, if it could not. */
  writeFailure: Error | null = null;

  constructor(
    private readonly input: ReadableStream<Uint8Array>,
    output: WritableStream<Uint8Array>,
    /** Where what is not protocol goes (standard error). */
    private readonly report: (line: string) => void,
  ) {
    this.#writer = output.getWriter();
    this.finished = new Promise((resolve) => this.#finish = resolve);
  }

  start(): Promise<void> {
    this.#read().catch((error) => {
      this.report(`ipintel mcp: reading standard input failed: ${(error as Error).message}`);
      this.#end();
    });
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const answered = "id" in message && ("result" in message || "error" in message);
    this.#write(message as RpcMessage);
    if (answered) this.#settle(message.id as RpcId);
    return this.#writes;
  }

  async close(): Promise<void> {
    await this.#writes;
    await this.#writer.close().catch(() => {});
    this.onclose?.();
  }

  async #read(): Promise<void> {
    for await (const line of boundedLines(this.input, MCP_MESSAGE_LIMIT)) {
      if (line instanceof LongLine) {
        this.report(
          `ipintel mcp: refused a line of ${line.bytes} bytes (the limit is ${MCP_MESSAGE_LIMIT})`,
        );
        this.#refuse(
          new RpcFailure(
            INVALID_REQUEST,
            `Invalid request: a line of ${line.bytes} bytes, more than the limit of ${MCP_MESSAGE_LIMIT}`,
          ),
        );
        continue;
      }
      if (line.trim() === "") continue;
      const parsed = parseMessages(line);
      if (parsed instanceof RpcFailure) this.#refuse(parsed);
      else if (parsed.batch) {
        this.#refuse(
          new RpcFailure(INVALID_REQUEST, "Invalid request: send one message a line, not a batch"),
        );
      } else this.#receive(parsed.messages[0]!);
    }
    this.#end();
  }

  #receive(message: RpcMessage): void {
    if ("id" in message) {
      const id = message.id as RpcId;
      // The SDK keys a request's cancellation by its id: two alive at once would mix.
      if (this.#awaited.has(id)) {
        this.#refuse(
          new RpcFailure(
            INVALID_REQUEST,
            `Invalid request: id ${JSON.stringify(id)} is still in use by a request in progress`,
            id,
          ),
        );
        return;
      }
      this.#awaited.add(id);
    } else if (message.method === "notifications/cancelled") {
      // The SDK answers a cancelled request with nothing: it is no longer awaited.
      const id = (message.params as { requestId?: RpcId } | undefined)?.requestId;
      if (id !== undefined) this.#settle(id);
    }
    this.onmessage?.(message as JSONRPCMessage);
  }

  #refuse(failure: RpcFailure): void {
    this.#write(rpcError(failure));
  }

  #write(message: RpcMessage): void {
    const bytes = this.#encoder.encode(`${JSON.stringify(message)}\n`);
    this.#writes = this.#writes.then(() => this.#writer.write(bytes)).catch((error) => {
      this.writeFailure ??= error as Error;
    });
  }

  #settle(id: RpcId): void {
    this.#awaited.delete(id);
    this.#check();
  }

  #end(): void {
    this.#ended = true;
    this.#check();
  }

  #check(): void {
    if (this.#ended && this.#awaited.size === 0) this.#writes.then(this.#finish);
  }
}
