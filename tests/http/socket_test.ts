/** What only a real socket shows: GET with a body, raw paths, the TCP peer for /me. */

import assert from "node:assert/strict";
import { serveWithNodeHttp } from "../../src/http/node_server.ts";
import { fixtureApp } from "../_helpers.ts";

const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

/** Serves the fixture app with node:http on an ephemeral port for the duration of `fn`. */
async function withNodeServer(fn: (port: number) => Promise<void>) {
  const app = await fixtureApp({ trustedProxies: [] });
  const server = await serveWithNodeHttp({ hostname: "127.0.0.1", port: 0 }, app.fetch);
  try {
    await fn(server.port);
  } finally {
    await server.close();
  }
}

/** Serves the fixture app with Deno.serve on an ephemeral port for the duration of `fn`. */
async function withServer(fn: (port: number) => Promise<void>) {
  const app = await fixtureApp({ trustedProxies: [] });
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen: () => {} },
    app.fetch,
  );
  try {
    await fn(server.addr.port);
  } finally {
    controller.abort();
    await server.finished;
  }
}

/** Sends one raw HTTP/1.1 request (fetch refuses GET bodies) and returns status and body. */
async function rawRequest(port: number, head: string, body = "") {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bytes = new TextEncoder().encode(body);
  const request = `${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
    (body ? `Content-Length: ${bytes.length}\r\n` : "") + "\r\n";
  await conn.write(new TextEncoder().encode(request));
  if (body) await conn.write(bytes);
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(64 * 1024);
  for (;;) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  conn.close();
  const text = new TextDecoder().decode(
    chunks.reduce((a, b) => new Uint8Array([...a, ...b]), new Uint8Array()),
  );
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
}

Deno.test("a GET with a JSON body supplies the user agent to parse (node:http server)", async () => {
  await withNodeServer(async (port) => {
    const { status, body } = await rawRequest(
      port,
      "GET /ip/81.2.69.142?get=userAgent HTTP/1.1\r\nContent-Type: application/json\r\nUser-Agent: curl/8.5.0",
      JSON.stringify({ userAgent: CHROME }),
    );
    assert.equal(status, 200);
    const parsed = JSON.parse(body);
    assert.equal(parsed.data.userAgent.browser.name, "Chrome");
    assert.equal(parsed.data.userAgent.os.name, "Windows");
  });
});

Deno.test("a GET body over 8 KiB is refused with 413, a malformed one with 400", async () => {
  await withNodeServer(async (port) => {
    const big = JSON.stringify({ userAgent: "x".repeat(9000) });
    const tooBig = await rawRequest(
      port,
      "GET /ip/81.2.69.142 HTTP/1.1\r\nContent-Type: application/json",
      big,
    );
    assert.equal(tooBig.status, 413);
    assert.match(JSON.parse(tooBig.body).message, /8192 bytes/);
    const malformed = await rawRequest(
      port,
      "GET /ip/81.2.69.142 HTTP/1.1\r\nContent-Type: application/json",
      "{userAgent:",
    );
    assert.equal(malformed.status, 400);
    assert.match(JSON.parse(malformed.body).message, /Malformed JSON body/);
  });
});

Deno.test("raw paths with %2C commas and bare IPv6 colons reach the routes", async () => {
  await withServer(async (port) => {
    const bulk = await rawRequest(port, "GET /bulk/81.2.69.142%2C2a02:ec0::1%2c9.9.9.9 HTTP/1.1");
    assert.equal(bulk.status, 200);
    const ips = JSON.parse(bulk.body).data.responseArray.map((i: { ip: string }) => i.ip);
    assert.deepEqual(ips, ["81.2.69.142", "2a02:ec0::1", "9.9.9.9"]);
    const v6 = await rawRequest(port, "GET /ip/2a02:ec0:0:0::1?get=countryCode HTTP/1.1");
    assert.deepEqual(JSON.parse(v6.body).data, { ip: "2a02:ec0::1", countryCode: "DE" });
  });
});

Deno.test("/me over a socket looks up the TCP peer (loopback: no data, named range)", async () => {
  await withServer(async (port) => {
    const me = await rawRequest(port, "GET /me HTTP/1.1\r\nX-Forwarded-For: 81.2.69.142");
    assert.equal(me.status, 404);
    assert.match(JSON.parse(me.body).message, /"127\.0\.0\.1": it is in a loopback range/);
  });
});

Deno.test("Deno.serve drops GET bodies, so a GET with a JSON body gets a 400 saying what to do", async () => {
  await withServer(async (port) => {
    const { status, body } = await rawRequest(
      port,
      "GET /ip/81.2.69.142 HTTP/1.1\r\nContent-Type: application/json",
      JSON.stringify({ userAgent: CHROME }),
    );
    assert.equal(status, 400);
    assert.match(JSON.parse(body).message, /ua query parameter.*--http-server node/);
  });
});

Deno.test("the node:http server answers lookups, bulk and /me like Deno.serve", async () => {
  await withNodeServer(async (port) => {
    const bulk = await rawRequest(
      port,
      "GET /bulk/81.2.69.142%2C2a02:ec0::1?get=countryCode HTTP/1.1",
    );
    assert.deepEqual(JSON.parse(bulk.body).data.responseArray, [
      { ip: "81.2.69.142", countryCode: "GB" },
      { ip: "2a02:ec0::1", countryCode: "DE" },
    ]);
    const post = await rawRequest(
      port,
      "POST /bulk?get=countryCode HTTP/1.1\r\nContent-Type: application/json",
      JSON.stringify({ ips: ["9.9.9.9"] }),
    );
    assert.deepEqual(JSON.parse(post.body).data.responseArray, [{
      ip: "9.9.9.9",
      countryCode: null,
    }]);
    const me = await rawRequest(port, "GET /me HTTP/1.1");
    assert.match(JSON.parse(me.body).message, /"127\.0\.0\.1": it is in a loopback range/);
  });
});
