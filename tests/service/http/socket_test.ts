/** What only a real socket shows: GET with a body, raw paths, the TCP peer for /me. */

import assert from "node:assert/strict";
import { readToClose, unchunk } from "../../_serve_process.ts";
import type { FetchHandler } from "../../../src/service/http/env.ts";
import { serveWithNodeHttp } from "../../../src/service/http/node_server.ts";
import { CHROME, fixtureApp } from "../../_helpers.ts";

/** Serves the fixture app with node:http on an ephemeral port for the duration of `fn`. */
async function withNodeServer(fn: (port: number) => Promise<void>) {
  const app = await fixtureApp({ config: { trustedProxies: [] } });
  const server = await serveWithNodeHttp({ hostname: "127.0.0.1", port: 0 }, app.fetch);
  try {
    await fn(server.port);
  } finally {
    await server.close();
  }
}

/** Serves the fixture app with Deno.serve on an ephemeral port for the duration of `fn`. */
async function withServer(fn: (port: number) => Promise<void>) {
  const app = await fixtureApp({ config: { trustedProxies: [] } });
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
  const { status, body: text } = await exchange(
    port,
    [...head.split("\r\n"), "Host: 127.0.0.1"],
    body,
  );
  return { status, body: text };
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

// ---------------------------------------------------------------------------
// Hostile requests, on both servers, with the handler `serve` uses.

/** The handler as `ipintel serve` builds it, over the fixtures. */
async function productionHandler(): Promise<FetchHandler> {
  return (await fixtureApp({ config: { bulkMax: 100 } })).fetch;
}

const SERVERS: Record<
  string,
  (handler: FetchHandler) => Promise<{ port: number; close(): Promise<void> }>
> = {
  "Deno.serve": (handler) => {
    const controller = new AbortController();
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen: () => {} },
      handler,
    );
    return Promise.resolve({
      port: server.addr.port,
      close: () => (controller.abort(), server.finished),
    });
  },
  "node:http": (handler) => serveWithNodeHttp({ hostname: "127.0.0.1", port: 0 }, handler),
};

/** Runs `fn` against each server in turn; assertion messages name the server. */
async function onBothServers(fn: (port: number, server: string) => Promise<void>) {
  const handler = await productionHandler();
  for (const [name, start] of Object.entries(SERVERS)) {
    const server = await start(handler);
    try {
      await fn(server.port, name);
    } finally {
      await server.close();
    }
  }
}

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * Sends `lines` (request line and headers, no Host added) and an optional body
 * over a fresh connection; parses the response (Content-Length framed).
 */
async function exchange(port: number, lines: string[], body = ""): Promise<RawResponse> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bytes = new TextEncoder().encode(body);
  const head = [...lines, "Connection: close"];
  if (body) head.push(`Content-Length: ${bytes.length}`);
  await conn.write(new TextEncoder().encode(head.join("\r\n") + "\r\n\r\n"));
  if (body) await conn.write(bytes);
  const text = await readToClose(conn);
  conn.close();
  const split = text.indexOf("\r\n\r\n");
  const [statusLine, ...headerLines] = text.slice(0, split).split("\r\n");
  const headers = new Map<string, string>();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const received = text.slice(split + 4);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1]),
    headers,
    body: headers.get("transfer-encoding") === "chunked" ? unchunk(received) : received,
  };
}

/** A GET with the given Host header. */
const getWithHost = (port: number, target: string, host: string) =>
  exchange(port, [`GET ${target} HTTP/1.1`, `Host: ${host}`]);

/** The message of a JSON or XML error envelope, asserting the envelope's shape. */
function errorMessage(response: RawResponse, format: "json" | "xml", label: string): string {
  const type = response.headers.get("content-type") ?? "";
  if (format === "json") {
    assert.match(type, /^application\/json/, label);
    const body = JSON.parse(response.body);
    assert.equal(body.success, false, label);
    return body.message;
  }
  assert.match(type, /^application\/xml/, label);
  const match =
    /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<response><success>false<\/success><message>([^<]*)<\/message><\/response>$/
      .exec(response.body);
  assert.ok(match, `${label}: ${response.body}`);
  const entities: Record<string, string> = { quot: '"', apos: "'", lt: "<", gt: ">", amp: "&" };
  return match[1]!.replace(/&(quot|apos|lt|gt|amp);/g, (_, name: string) => entities[name]!);
}

Deno.test("the Host header cannot change the route or the query (both servers)", async () => {
  await onBothServers(async (port, server) => {
    // Rebuilding a URL from this Host gave http://x/ip/1.1.1.1?/health: answered as /ip/1.1.1.1.
    const moved = await getWithHost(port, "/health", "x/ip/1.1.1.1?");
    assert.equal(moved.status, 400, `${server}: ${moved.body}`);
    assert.doesNotMatch(moved.body, /"data"/, server);
    assert.match(errorMessage(moved, "json", server), /^Invalid Host header "x\/ip\/1\.1\.1\.1\?"/);
    // ...and http://x?format=xml&/ip/...: answered in XML.
    const format = await getWithHost(port, "/ip/81.2.69.142?get=city", "x?format=xml&");
    assert.equal(format.status, 400, server);
    assert.match(errorMessage(format, "json", server), /Invalid Host header "x\?format=xml&"/);
    // With a valid Host, the target alone decides.
    const plain = await getWithHost(
      port,
      "/ip/81.2.69.142?get=city&format=xml",
      "api.example:8000",
    );
    assert.equal(plain.status, 200, server);
    assert.match(plain.body, /<city>London<\/city>/, server);
    const fast = await getWithHost(port, "/ip/9.9.9.9", "[::1]:8000");
    assert.equal(JSON.parse(fast.body).data.connection.asn_number, 19281, server);
  });
});

const MALFORMED_HOSTS = ["a b/c", "x:99999", "[::1", "@", "%2F", "localhost:-1", "x/health?"];
const TARGETS = ["/ip/81.2.69.142", "/ip/1.2.3", "/health", "/bulk/9.9.9.9", "/me", "/nowhere"];

Deno.test("a malformed Host answers 400 with the envelope in the requested format (both servers)", async () => {
  await onBothServers(async (port, server) => {
    for (const host of MALFORMED_HOSTS) {
      for (const target of TARGETS) {
        for (const format of ["json", "xml"] as const) {
          const label = `${server} Host: ${host} GET ${target} (${format})`;
          const query = format === "xml" ? "?format=xml" : "";
          const response = await getWithHost(port, target + query, host);
          assert.equal(response.status, 400, `${label}: ${response.body}`);
          const message = errorMessage(response, format, label);
          assert.match(message, /^Invalid Host header /, label);
        }
      }
    }
  });
});

Deno.test("TRACE and other unserved methods answer 405 with Allow and the envelope (both servers)", async () => {
  await onBothServers(async (port, server) => {
    for (const method of ["TRACE", "PUT", "DELETE", "PATCH"]) {
      for (const format of ["json", "xml"] as const) {
        const label = `${server} ${method} (${format})`;
        const query = format === "xml" ? "?format=xml" : "";
        const response = await exchange(port, [
          `${method} /ip/81.2.69.142${query} HTTP/1.1`,
          "Host: x",
        ]);
        assert.equal(response.status, 405, `${label}: ${response.body}`);
        assert.equal(response.headers.get("allow"), "GET, HEAD, POST, OPTIONS", label);
        assert.match(
          errorMessage(response, format, label),
          new RegExp(`^Method "${method}" is not allowed`),
          label,
        );
      }
    }
  });
});

const LINE_BREAKS = ["%0A", "%0D", "%E2%80%A8", "%0D%0A"];

Deno.test("an encoded line break fails only its bulk item, and /ip says Invalid IP address (both servers)", async () => {
  await onBothServers(async (port, server) => {
    for (const lineBreak of LINE_BREAKS) {
      const label = `${server} ${lineBreak}`;
      const bulk = await exchange(port, [
        `GET /bulk/81.2.69.142,9.9.9.9${lineBreak},1.1.1.1?get=countryCode HTTP/1.1`,
        "Host: x",
      ]);
      assert.equal(bulk.status, 200, `${label}: ${bulk.body}`);
      const items = JSON.parse(bulk.body).data.responseArray;
      assert.equal(items.length, 3, label);
      assert.deepEqual(items[0], { ip: "81.2.69.142", countryCode: "GB" }, label);
      assert.equal(items[1].ip, `9.9.9.9${decodeURIComponent(lineBreak)}`, label);
      assert.equal(items[1].error.status, 404, label);
      assert.match(items[1].error.message, /^Invalid IP address "9\.9\.9\.9\\[nru]/, label);
      assert.deepEqual(items[2], { ip: "1.1.1.1", countryCode: "AU" }, label);
      const one = await exchange(port, [`GET /ip/9.9.9.9${lineBreak} HTTP/1.1`, "Host: x"]);
      assert.equal(one.status, 404, label);
      assert.match(
        errorMessage(one, "json", label),
        /^Invalid IP address "9\.9\.9\.9\\[nru]/,
        label,
      );
    }
  });
});

Deno.test("error messages that echo input cap it (both servers)", async () => {
  const long = "a".repeat(10_000);
  await onBothServers(async (port, server) => {
    const cases = [
      { target: `/${long}`, status: 404, message: /^No route for GET "\/a{63}…": see/ },
      {
        target: `/ip/81.2.69.142?lang=${long}`,
        status: 400,
        message: /^Invalid lang "a{64}…": expected one language tag/,
      },
      { target: `/ip/${long}`, status: 404, message: /^Invalid IP address "a{64}…"/ },
      { target: `/ip/81.2.69.142?get=${long}`, status: 400, message: /^Unknown field "a{1,64}…"/ },
    ];
    for (const { target, status, message } of cases) {
      const response = await exchange(port, [`GET ${target} HTTP/1.1`, "Host: x"]);
      const label = `${server} ${target.slice(0, 30)}`;
      assert.equal(response.status, status, label);
      const text = errorMessage(response, "json", label);
      assert.match(text, message, label);
      assert.ok(text.length < 1000, `${label}: ${text.length} characters`);
    }
    const method = await exchange(port, [`${"X".repeat(500)} / HTTP/1.1`, "Host: x"]);
    if (method.status === 405) assert.ok(method.body.length < 300, `${server}: long method`);
    else assert.equal(method.status, 400, `${server}: long method`); // refused by the HTTP parser
  });
});

Deno.test("POST /bulk needs a JSON, plain-text or NDJSON Content-Type, else 415 (both servers)", async () => {
  await onBothServers(async (port, server) => {
    const body = JSON.stringify({ ips: ["9.9.9.9"] });
    for (const type of [null, "application/x-www-form-urlencoded", "application/jsonx"]) {
      const lines = ["POST /bulk HTTP/1.1", "Host: x", ...(type ? [`Content-Type: ${type}`] : [])];
      const response = await exchange(port, lines, body);
      const label = `${server} ${type}`;
      assert.equal(response.status, 415, `${label}: ${response.body}`);
      assert.match(
        errorMessage(response, "json", label),
        /^Unsupported Content-Type .*application\/json .*text\/plain .*application\/x-ndjson$/,
      );
    }
    const ok = await exchange(
      port,
      ["POST /bulk?get=ip HTTP/1.1", "Host: x", "Content-Type: application/json; charset=utf-8"],
      body,
    );
    assert.equal(ok.status, 200, server);
  });
});

Deno.test('{"ips":[""]} and {"ips":["",""]} are answered alike: each item fails in place (both servers)', async () => {
  await onBothServers(async (port, server) => {
    const post = (ips: string[]) =>
      exchange(
        port,
        ["POST /bulk HTTP/1.1", "Host: x", "Content-Type: application/json"],
        JSON.stringify({ ips }),
      );
    const one = await post([""]);
    const two = await post(["", ""]);
    assert.equal(one.status, 200, `${server}: ${one.body}`);
    assert.equal(two.status, 200, server);
    const item = JSON.parse(one.body).data.responseArray[0];
    assert.equal(item.ip, "");
    assert.equal(item.error.status, 404);
    assert.match(item.error.message, /^Invalid IP address ""/);
    assert.deepEqual(JSON.parse(two.body).data.responseArray, [item, item], server);
    const empty = await post([]);
    assert.equal(empty.status, 400, server);
  });
});

Deno.test("HEAD answers with the GET's status, headers and length, and no body (both servers)", async () => {
  await onBothServers(async (port, server) => {
    for (
      const target of [
        "/ip/81.2.69.142",
        "/ip/81.2.69.142?format=xml",
        "/health",
        "/ip/1.2.3",
        "/bulk/9.9.9.9,1.1.1.1?format=csv",
      ]
    ) {
      const label = `${server} HEAD ${target}`;
      const get = await exchange(port, [`GET ${target} HTTP/1.1`, "Host: x"]);
      const head = await exchange(port, [`HEAD ${target} HTTP/1.1`, "Host: x"]);
      assert.equal(head.status, get.status, label);
      assert.equal(head.body, "", label);
      assert.equal(
        head.headers.get("content-length"),
        String(new TextEncoder().encode(get.body).length),
        label,
      );
      for (const name of ["content-type", "access-control-allow-origin"]) {
        assert.equal(head.headers.get(name), get.headers.get(name), `${label}: ${name}`);
      }
    }
  });
});

Deno.test("POST /ip/{ip} with a JSON userAgent body parses it, on Deno.serve too (both servers)", async () => {
  await onBothServers(async (port, server) => {
    const response = await exchange(
      port,
      [
        "POST /ip/81.2.69.142?get=userAgent.browser.name,userAgent.os.name HTTP/1.1",
        "Host: x",
        "Content-Type: application/json",
        "User-Agent: curl/8.5.0",
      ],
      JSON.stringify({ userAgent: CHROME }),
    );
    assert.equal(response.status, 200, `${server}: ${response.body}`);
    assert.deepEqual(JSON.parse(response.body).data, {
      ip: "81.2.69.142",
      userAgent: { browser: { name: "Chrome" }, os: { name: "Windows" } },
    });
    const plain = await exchange(port, [
      "POST /ip/81.2.69.142 HTTP/1.1",
      "Host: x",
      "Content-Type: text/plain",
    ], CHROME);
    assert.equal(plain.status, 415, server);
  });
});

Deno.test("an over-long request target is a 414 envelope on both servers, in the format asked", async () => {
  await onBothServers(async (port, server) => {
    const long = `/bulk/${"8.8.8.8,".repeat(5000)}?format=xml`;
    const response = await exchange(port, [`GET ${long} HTTP/1.1`, "Host: localhost"]);
    assert.equal(response.status, 414, server);
    assert.match(response.body, /<success>false<\/success>/, server);
    assert.match(response.body, /longer than the limit of 32768/, server);
  });
});
