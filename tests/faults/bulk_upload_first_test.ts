/**
 * Clients that send their whole body before reading the answer (Python's
 * urllib and requests, most simple clients) against a streamed POST /bulk far
 * larger than the socket buffers, on both servers: every line is answered, in
 * order, and nothing waits for ever. Before the body was read ahead of the
 * answer, both sides' buffers filled and the request hung.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { startServe } from "../_serve_process.ts";

const LINES = 1_000_000;
/** Longer than any run of these should take on a loaded machine; a hang fails instead of blocking. */
const DEADLINE_MS = 240_000;

/** Bytes the raw client writes at once. */
const UPLOAD_PIECE = 256 * 1024;

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/** Line `i` of the body: distinct addresses, one in eight known to the fixture (GB). */
function line(i: number): string {
  return i % 8 === 0
    ? `81.2.69.${(i >> 3) & 255}`
    : `${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.9`;
}

function body(): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) lines.push(line(i));
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

/** Checks an NDJSON answer: one item a line, `line(i)` at line i, the known ones located. */
function assertAnswer(text: string): void {
  const items = text.split("\n");
  assert.equal(items.pop(), "", "the answer ends with a line end");
  assert.equal(items.length, LINES, "one item per line");
  for (let i = 0; i < LINES; i++) {
    const item = items[i]!;
    // Checking the start of each line keeps 1,000,000 JSON.parse calls out of the test.
    if (!item.startsWith(`{"ip":"${line(i)}",`)) assert.fail(`line ${i + 1}: ${item}`);
    if (i % 100_000 === 0) {
      const parsed = JSON.parse(item);
      if (i % 8 === 0) assert.equal(parsed.geoLocation.countryCode, "GB");
      else assert.equal(parsed.error.status, 404);
    }
  }
}

/** The whole request written on a raw socket, then the whole answer read: status, headers, body. */
async function uploadFirst(port: number, path: string, content: Uint8Array) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), DEADLINE_MS);
  try {
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${content.length}\r\nConnection: close\r\n\r\n`;
    const request = new TextEncoder().encode(head);
    await writeAll(conn, request);
    // In pieces with short pauses, as a client on a network sends: the server answers
    // meanwhile, and its answer (full results: ~40× the body) outgrows the socket buffers
    // long before the body ends. A server that stops reading then leaves this write waiting.
    for (let at = 0; at < content.length; at += UPLOAD_PIECE) {
      await writeAll(conn, content.subarray(at, at + UPLOAD_PIECE)).catch(() => {
        throw new Error(`stuck after ${at} bytes of the body: the server stopped reading it`);
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    const buffer = new Uint8Array(256 * 1024);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
      size += n;
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) all.set(chunk, at), at += chunk.length;
    return parseResponse(all);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed at the deadline */ }
  }
}

/** Splits an HTTP/1.1 response; a chunked body is put together. */
function parseResponse(bytes: Uint8Array): { status: number; headers: string; body: string } {
  const decoder = new TextDecoder();
  const end = bytes.indexOf(13, 0);
  let headEnd = end;
  while (!(bytes[headEnd] === 13 && bytes[headEnd + 1] === 10 && bytes[headEnd + 2] === 13)) {
    headEnd = bytes.indexOf(13, headEnd + 1);
    assert.ok(headEnd >= 0, "no end of headers");
  }
  const headers = decoder.decode(bytes.subarray(0, headEnd)).toLowerCase();
  const status = Number(headers.split(" ")[1]);
  let rest = bytes.subarray(headEnd + 4);
  if (!/\r\ntransfer-encoding: chunked/.test(headers)) {
    return { status, headers, body: decoder.decode(rest) };
  }
  const parts: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const lineEnd = rest.indexOf(13);
    const size = parseInt(decoder.decode(rest.subarray(0, lineEnd)), 16);
    if (!(size > 0)) break;
    parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
    length += size;
    rest = rest.subarray(lineEnd + 2 + size + 2);
  }
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) joined.set(part, at), at += part.length;
  return { status, headers, body: decoder.decode(joined) };
}

/** Python's urllib, as the report ran it: the file is sent whole, then the answer read. */
const PYTHON_CLIENT = `
import sys, urllib.request
request = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], "rb"), method="POST",
    headers={"Content-Type": "text/plain", "Content-Length": sys.argv[3]})
out = open(sys.argv[4], "wb")
with urllib.request.urlopen(request, timeout=120) as response:
    while True:
        chunk = response.read(1 << 20)
        if not chunk:
            break
        out.write(chunk)
`;

for (const server of ["deno", "node"] as const) {
  Deno.test(`${server} server: a raw socket that writes a ${LINES.toLocaleString("en")}-line body before reading gets every line, in order`, async () => {
    const dataDir = await writeFixtureDataDir();
    const serve = await startServe({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_KV: ":memory:",
      IPINTEL_WORKERS: "1",
      IPINTEL_AUTH: "off",
      IPINTEL_HTTP_SERVER: server,
    });
    try {
      const answer = await uploadFirst(serve.port, "/bulk?format=ndjson", body());
      assert.equal(answer.status, 200, answer.body.slice(0, 500));
      assertAnswer(answer.body);
      assert.doesNotMatch(serve.stderr(), /Internal server error|Uncaught/);
    } finally {
      await serve.stop();
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}

Deno.test({
  name: "Python's urllib (upload first, then read) gets every line of a 1,000,000-line body",
  ignore: !await exists("/usr/bin/python3"),
  fn: async () => {
    const dataDir = await writeFixtureDataDir();
    const dir = await Deno.makeTempDir();
    const serve = await startServe({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_KV: ":memory:",
      IPINTEL_WORKERS: "1",
      IPINTEL_AUTH: "off",
    });
    try {
      const content = body();
      await Deno.writeFile(`${dir}/body.txt`, content);
      await Deno.writeTextFile(`${dir}/client.py`, PYTHON_CLIENT);
      const child = new Deno.Command("/usr/bin/python3", {
        args: [
          `${dir}/client.py`,
          `http://127.0.0.1:${serve.port}/bulk?format=ndjson`,
          `${dir}/body.txt`,
          String(content.length),
          `${dir}/answer.ndjson`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const timer = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS);
      const { code, stderr } = await child.output();
      clearTimeout(timer);
      assert.equal(code, 0, new TextDecoder().decode(stderr));
      assertAnswer(await Deno.readTextFile(`${dir}/answer.ndjson`));
    } finally {
      await serve.stop();
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}
