/**
 * Slow and idle clients, measured on both HTTP servers: how long a
 * connection that sent half a request head, and an idle kept-alive one, stay
 * open. node:http closes both; Deno.serve (Deno 2.9) has no such timeout, so
 * the README sends those who face untrusted clients to a reverse proxy. The
 * figures are printed.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { startServe } from "../_serve_process.ts";

/** Observed for this long at most (the node server's head timeout is 10 s). */
const WATCH_MS = 20_000;

/** Sends `text`, then seconds until the server closes the connection (null: still open after WATCH_MS). */
async function heldFor(port: number, text: string): Promise<number | null> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(text));
  const started = performance.now();
  const timer = setTimeout(() => conn.close(), WATCH_MS);
  const buffer = new Uint8Array(16 * 1024);
  let closedByServer = false;
  try {
    while ((await conn.read(buffer)) !== null);
    closedByServer = true;
  } catch {
    // closed here after WATCH_MS
  } finally {
    clearTimeout(timer);
  }
  if (closedByServer) conn.close();
  return closedByServer ? (performance.now() - started) / 1000 : null;
}

const HALF_HEAD = "GET /ip/81.2.69.142 HTTP/1.1\r\nHost: 127.0.0.1\r\n";
const IDLE_KEEP_ALIVE = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

Deno.test("half a request head and an idle keep-alive connection: what each HTTP server does (figures printed)", async () => {
  const dataDir = await writeFixtureDataDir();
  const servers = await Promise.all(
    (["deno", "node"] as const).map((httpServer) =>
      startServe({
        IPINTEL_DATA_DIR: dataDir,
        IPINTEL_KV: `${dataDir}/${httpServer}.kv`,
        IPINTEL_AUTH: "off",
        IPINTEL_LOG: "off",
        IPINTEL_WORKERS: "1",
        IPINTEL_HTTP_SERVER: httpServer,
      })
    ),
  );
  const [deno, node] = servers as [typeof servers[0], typeof servers[0]];
  try {
    const [denoHead, denoIdle, nodeHead, nodeIdle] = await Promise.all([
      heldFor(deno.port, HALF_HEAD),
      heldFor(deno.port, IDLE_KEEP_ALIVE),
      heldFor(node.port, HALF_HEAD),
      heldFor(node.port, IDLE_KEEP_ALIVE),
    ]);
    const show = (s: number | null) =>
      s === null ? `open after ${WATCH_MS / 1000} s` : `closed after ${s.toFixed(1)} s`;
    console.log(
      `  half a request head: deno ${show(denoHead)}, node ${show(nodeHead)}; ` +
        `idle keep-alive: deno ${show(denoIdle)}, node ${show(nodeIdle)}`,
    );
    assert.ok(nodeHead !== null && nodeHead <= 15, `node: half a head ${show(nodeHead)}`);
    assert.ok(nodeIdle !== null && nodeIdle <= 10, `node: idle keep-alive ${show(nodeIdle)}`);
  } finally {
    for (const server of servers) await server.kill();
    await Deno.remove(dataDir, { recursive: true });
  }
});
