/**
 * A streamed POST /bulk on both HTTP servers: the node server's whole-request
 * timeout does not cut an upload that keeps sending, and an upload that stops
 * ends at the stream idle timeout (IPINTEL_STREAM_IDLE_TIMEOUT) with its final
 * record, the same on both servers. The timeouts are shortened here; the
 * defaults are 60 s each.
 */

import assert from "node:assert/strict";
import type { FetchHandler } from "../../../src/service/http/env.ts";
import { serveWithNodeHttp } from "../../../src/service/http/node_server.ts";
import { fixtureApp } from "../../_helpers.ts";

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function appWithIdleTimeout(seconds: number): Promise<FetchHandler> {
  const app = await fixtureApp({ config: { streamIdleTimeout: seconds } });
  return app.fetch as FetchHandler;
}

type Server = { port: number; close(): Promise<void> };

/** The node server with its whole-request timeout at 500 ms (60 s by default). */
function nodeServer(handler: FetchHandler): Promise<Server> {
  return serveWithNodeHttp(
    { hostname: "127.0.0.1", port: 0, headersTimeoutMs: 500, requestTimeoutMs: 500 },
    handler,
  );
}

function denoServer(handler: FetchHandler): Promise<Server> {
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen: () => {} },
    handler,
  );
  return Promise.resolve({
    port: server.addr.port,
    close: () => (controller.abort(), server.finished),
  });
}

/**
 * POSTs a text body made of `chunks`, one every `everyMs`, then either ends
 * it or (stall) holds it open without sending; returns the NDJSON lines of
 * the answer, read to its end.
 */
async function slowUpload(port: number, chunks: string[], everyMs: number, stall: boolean) {
  let release = () => {};
  const released = new Promise<void>((resolve) => release = resolve);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent > 0) await sleep(everyMs);
      if (sent < chunks.length) return controller.enqueue(encoder.encode(chunks[sent++]!));
      if (stall) await released;
      controller.close();
    },
  }, { highWaterMark: 0 });
  const abort = new AbortController();
  try {
    const response = await fetch(`http://127.0.0.1:${port}/bulk?format=ndjson&get=ip`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body,
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  } finally {
    release();
    abort.abort();
  }
}

Deno.test("node server: an upload that keeps sending for longer than the request timeout is answered to its end", async () => {
  const server = await nodeServer(await appWithIdleTimeout(5));
  try {
    // 12 chunks of 2 addresses, one every 150 ms: 1.65 s in all, over three request timeouts.
    const chunks = Array.from({ length: 12 }, (_, i) => `192.0.2.${i}\n198.51.100.${i}\n`);
    const lines = await slowUpload(server.port, chunks, 150, false);
    assert.equal(lines.length, 24, JSON.stringify(lines.at(-1)));
    assert.ok(lines.every((line) => typeof line.ip === "string" && !("incomplete" in line)));
    assert.equal(lines[23].ip, "198.51.100.11");
  } finally {
    await server.close();
  }
});

for (const [name, start] of [["node", nodeServer], ["Deno.serve", denoServer]] as const) {
  Deno.test(`${name}: an upload that stops sending ends at the idle timeout with its final record`, async () => {
    const server = await start(await appWithIdleTimeout(1));
    try {
      const lines = await slowUpload(server.port, ["192.0.2.1\n192.0.2.2\n192.0.2.3\n"], 0, true);
      assert.equal(lines.length, 4, JSON.stringify(lines));
      assert.deepEqual(lines.slice(0, 3).map((line) => line.ip), [
        "192.0.2.1",
        "192.0.2.2",
        "192.0.2.3",
      ]);
      assert.deepEqual(lines[3], {
        incomplete: {
          status: 408,
          message:
            "Nothing read or written for 1 s: 3 addresses answered, send the rest from address 4",
          answered: 3,
          retryAfter: null,
        },
      });
    } finally {
      await server.close();
    }
  });
}

Deno.test("node server: a request body that is not streamed still has to arrive within the request timeout (408)", async () => {
  const server = await nodeServer(await appWithIdleTimeout(60));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  try {
    // A GET /ip body (the spec's JSON user agent) declared 100 bytes long, of which 10 come.
    const head = "GET /ip/81.2.69.142 HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
      "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n";
    await conn.write(encoder.encode(head + '{"userAgen'));
    const answer = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(
      answer,
      /"message":"Request not received within 0\.5 s: send the whole request sooner"/,
    );
  } finally {
    await server.close();
  }
});
