/**
 * Streamed bulk over HTTP (src/service/app/bulk_answer.ts): the same bytes per item as
 * the whole answer, every format well-formed by real parsers, the limit ending
 * a stream with a final record, back-pressure, the client going away, and a
 * 100,000-address request.
 */

import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { HTTP_BATCH_SIZE as BATCH_SIZE } from "../../../src/service/app/bulk_answer.ts";
import { Lookup, type LookupOptions } from "../../../src/core/lookup/lookup.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import {
  fixtureApp,
  fixtureLookup,
  openedOnce,
  peer,
  writeFixtureDataDir,
} from "../../_helpers.ts";

const BULK_MAX = 50;
const lookups = { count: 0 };

async function app(access?: AccessControl) {
  const inner = await fixtureLookup();
  const lookup = new class extends Lookup {
    override find(ip: string, options?: LookupOptions) {
      lookups.count++;
      return super.find(ip, options);
    }
  }(inner);
  return await fixtureApp({ lookup, config: { bulkMax: BULK_MAX }, access });
}

const open = await app();

/** A mix: found (IPv4, IPv6, ASN only, registered country only), invalid, reserved, duplicates. */
const MIX = [
  "81.2.69.142",
  "1.2.3",
  "2a02:ec0::1",
  "9.9.9.9",
  "81.2.69.142",
  "192.168.0.1",
  "1.1.1.1",
  "",
  "=cmd",
  "2A02:0EC0::0001",
];

const post = (
  target: string,
  body: BodyInit,
  type = "application/json",
  headers: Record<string, string> = {},
  to = open,
) =>
  to.request(
    target,
    { method: "POST", headers: { "content-type": type, ...headers }, body },
    peer("203.0.113.9"),
  );

const whole = (query: string) =>
  open.request(`/bulk/${MIX.map(encodeURIComponent).join(",")},${query}`);

Deno.test("a streamed answer holds the whole answer's bytes, in JSON, CSV, XML and NDJSON", async () => {
  const body = JSON.stringify({ ips: MIX });
  for (const query of ["", "get=countryCode,asn_org,currency.code,isThreat", "lang=de&ua=curl/8"]) {
    for (const format of ["json", "csv", "xml"]) {
      const q = `?format=${format}${query ? `&${query}` : ""}`;
      const expected = await (await whole(q)).text();
      const streamed = await post(`/bulk${q}`, body);
      assert.equal(streamed.status, 200);
      assert.equal(await streamed.text(), expected, `${format} ${query}`);
    }
    // NDJSON: each line is the text of one item of the whole JSON answer.
    const q = query ? `&${query}` : "";
    const json = await (await whole(`?format=json${q}`)).text();
    const lines = (await (await post(`/bulk?format=ndjson${q}`, body)).text()).split("\n");
    assert.equal(lines.pop(), "", "NDJSON ends with a line break");
    assert.equal(`{"success":true,"data":{"responseArray":[${lines.join(",")}]}}`, json, query);
  }
});

Deno.test("the three body formats give the same answer, in input order with failures in place", async () => {
  const json = await (await post("/bulk?format=ndjson", JSON.stringify({ ips: MIX }))).text();
  const text = MIX.filter((ip) => ip !== "").join("\r\n") + "\r\n";
  const ndjson = MIX.map((ip, i) => JSON.stringify(i % 2 ? { ip } : ip)).join("\n");
  const fromText = await (await post("/bulk?format=ndjson", text, "text/plain")).text();
  const fromNdjson = await (await post("/bulk?format=ndjson", ndjson, "application/x-ndjson"))
    .text();
  // Plain text skips the blank line; the JSON and NDJSON bodies report the empty item in place.
  const withoutEmpty = json.split("\n").filter((line) => !line.startsWith('{"ip":"","error"'));
  assert.equal(fromText, withoutEmpty.join("\n"));
  assert.equal(fromNdjson, json);
  const items = json.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(items.map((item) => item.ip), [
    "81.2.69.142",
    "1.2.3",
    "2a02:ec0::1",
    "9.9.9.9",
    "81.2.69.142",
    "192.168.0.1",
    "1.1.1.1",
    "",
    "=cmd",
    "2a02:ec0::1",
  ]);
  assert.deepEqual(items.map((item) => item.error?.status ?? 200), [
    200,
    404,
    200,
    200,
    200,
    404,
    200,
    404,
    404,
    200,
  ]);
});

Deno.test("every streamed format is well-formed for real parsers, past IPINTEL_BULK_MAX too", async () => {
  const ips = Array.from({ length: BULK_MAX * 4 + 3 }, (_, i) => MIX[i % MIX.length]!);
  const body = JSON.stringify({ ips });
  const ndjson = await post("/bulk", body, "application/json", { accept: "application/x-ndjson" });
  assert.equal(ndjson.headers.get("content-type"), "application/x-ndjson");
  const lines = (await ndjson.text()).trim().split("\n").map((line) => JSON.parse(line));
  assert.equal(lines.length, ips.length);

  const json = JSON.parse(await (await post("/bulk", body)).text());
  assert.equal(json.success, true);
  assert.deepEqual(json.data.responseArray, lines);

  const csv = await (await post("/bulk?format=csv", body)).text();
  const rows = parseCsv(csv, { columns: true }) as Record<string, string>[];
  assert.equal(rows.length, ips.length);
  assert.equal(rows[8]!.ip, "'=cmd", "a formula is neutralised in a streamed CSV too");
  assert.equal(rows[1]!["error.status"], "404");

  const xml = await (await post("/bulk?format=xml", body)).text();
  assert.equal(XMLValidator.validate(xml), true);
  const parsed = new XMLParser({ parseTagValue: false }).parse(xml);
  assert.equal(parsed.response.data.responseArray.item.length, ips.length);

  // A GET list longer than IPINTEL_BULK_MAX is streamed, not refused.
  const list = ips.map(encodeURIComponent).join(",");
  const get = await open.request(`/bulk/${list}`);
  assert.equal(get.status, 200);
  assert.deepEqual(JSON.parse(await get.text()).data.responseArray, lines);
});

Deno.test("errors before the first answer keep their status: empty, malformed, wrong type, lang", async () => {
  const cases: [Response, number, RegExp][] = [
    [await post("/bulk", '{"ips": []}'), 400, /Empty bulk list/],
    [await post("/bulk", "", "text/plain"), 400, /Empty bulk list/],
    [await post("/bulk", "{not json"), 400, /Malformed JSON body/],
    [await post("/bulk", '{"ips": "8.8.8.8"}'), 400, /"ips" must be an array/],
    [await post("/bulk", "8.8.8.8", "application/xml"), 415, /Unsupported Content-Type/],
    [await post("/bulk?lang=xx", '{"ips": ["8.8.8.8"]}'), 400, /Unsupported lang "xx"/],
    [await post("/bulk?get=nope", '{"ips": ["8.8.8.8"]}'), 400, /Unknown field "nope"/],
  ];
  for (const [response, status, message] of cases) {
    assert.equal(response.status, status);
    assert.match((await response.json()).message, message);
  }
});

Deno.test("a compressed body is refused with 415 naming its encoding, before any unit is charged", async () => {
  const gzipped = await new Response(
    new Blob(["8.8.8.8\n1.1.1.1\n"]).stream().pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer();
  const server = await limited(5);
  for (const [target, type] of [["/bulk", "text/plain"], ["/ip/1.1.1.1", "application/json"]]) {
    const response = await post(target!, gzipped, type, { "content-encoding": "gzip" }, server);
    assert.equal(response.status, 415, target);
    assert.equal(
      (await response.json()).message,
      'Unsupported Content-Encoding "gzip": send the body uncompressed',
    );
  }
  // The whole budget is left: the refused bodies were never read as addresses.
  const next = await post("/bulk", "8.8.8.8\n", "text/plain", {}, server);
  assert.equal(next.headers.get("ratelimit-remaining"), "4");
  await next.body?.cancel();
});

Deno.test("a body that turns malformed after answers were sent ends with a final record", async () => {
  const ips = Array.from({ length: BATCH_SIZE + 10 }, () => '"9.9.9.9"').join(",");
  const chunks = [`{"ips":[${ips},`, "}"];
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(chunk));
    },
  });
  const response = await post("/bulk?format=ndjson", body);
  assert.equal(response.status, 200);
  const lines = (await response.text()).trim().split("\n").map((line) => JSON.parse(line));
  const last = lines.pop();
  assert.equal(lines.length, BATCH_SIZE + 10);
  assert.equal(last.incomplete.status, 400);
  assert.equal(last.incomplete.answered, BATCH_SIZE + 10);
  assert.match(last.incomplete.message, /Malformed JSON body: unexpected "}"/);
});

/** An app whose keyless callers get `limit` units per minute. */
async function limited(limit: number) {
  const keys = new KeyTable(new MemoryKeyStore());
  await keys.refresh();
  const limiter = new RateLimiter({ counters: new MemoryRateCounters() });
  const access = new AccessControl(
    { auth: "optional", rateLimit: 0, rateWindow: 60, anonRateLimit: limit },
    keys,
    limiter,
  );
  return await app(access);
}

Deno.test("the budget running out ends the stream with a final record; then 429 as before", async () => {
  const budget = BATCH_SIZE + 44;
  const ips = Array.from({ length: 1000 }, (_, i) => MIX[i % MIX.length]!);
  for (const format of ["ndjson", "json", "csv", "xml"]) {
    const server = await limited(budget);
    const response = await post(
      `/bulk?format=${format}`,
      JSON.stringify({ ips }),
      undefined,
      {},
      server,
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("ratelimit-limit"), String(budget));
    const text = await response.text();
    let stop;
    if (format === "ndjson") {
      const lines = text.trim().split("\n").map((line) => JSON.parse(line));
      stop = lines.pop().incomplete;
      assert.equal(lines.length, budget);
    } else if (format === "json") {
      const parsed = JSON.parse(text);
      assert.equal(parsed.data.responseArray.length, budget);
      stop = parsed.data.incomplete;
    } else if (format === "csv") {
      const rows = parseCsv(text, { columns: true }) as Record<string, string>[];
      const last = rows.pop()!;
      assert.equal(rows.length, budget);
      assert.equal(last.ip, "");
      assert.equal(last["error.status"], "429");
      assert.match(last["error.message"]!, new RegExp(`${budget} addresses answered`));
      continue;
    } else {
      assert.equal(XMLValidator.validate(text), true);
      const parsed = new XMLParser({ parseTagValue: false }).parse(text);
      assert.equal(parsed.response.data.responseArray.item.length, budget);
      stop = parsed.response.data.incomplete;
      stop = {
        ...stop,
        status: Number(stop.status),
        answered: Number(stop.answered),
        retryAfter: Number(stop.retryAfter),
      };
    }
    assert.equal(stop.status, 429);
    assert.equal(stop.answered, budget);
    assert.ok(stop.retryAfter > 0 && stop.retryAfter <= 60, String(stop.retryAfter));
    assert.match(
      stop.message,
      new RegExp(`Rate limit exceeded.*send the rest from address ${budget + 1}`),
    );
    // Nothing left: the next request cannot start and is refused as today.
    const refused = await post(
      `/bulk?format=${format}`,
      JSON.stringify({ ips }),
      undefined,
      {},
      server,
    );
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    assert.equal(refused.headers.get("ratelimit-remaining"), "0");
    await refused.body?.cancel();
  }
});

/** A request body that never ends: addresses made as they are pulled. */
function endlessBody() {
  const state = { pulls: 0, cancelled: false };
  const line = new TextEncoder().encode("81.2.69.142\n9.9.9.9\n".repeat(50));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulls++;
      controller.enqueue(line);
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

Deno.test("back-pressure: a client that reads nothing more gets nothing more looked up", async () => {
  const { stream, state } = endlessBody();
  const before = lookups.count;
  const response = await post("/bulk?format=ndjson", stream, "text/plain");
  const reader = response.body!.getReader();
  await reader.read();
  for (let i = 0; i < 5; i++) await settle();
  const looked = lookups.count - before;
  const pulls = state.pulls;
  // The batch read, at most one more queued: never the endless rest.
  assert.ok(looked <= 3 * BATCH_SIZE, `${looked} lookups for one read`);
  for (let i = 0; i < 5; i++) await settle();
  assert.equal(lookups.count - before, looked, "nothing more was looked up while no one read");
  // The body itself is read ahead of the answer, within the read-ahead's bounds
  // (tests/service/bulk/read_ahead_test.ts), so that clients that upload first never deadlock.
  assert.ok(state.pulls >= pulls);
  await reader.cancel();
  assert.equal(state.cancelled, true, "cancelling the answer cancels the body");
});

Deno.test("the client going away over a socket stops the work", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request, info) => open.fetch(request, { remoteAddr: info.remoteAddr }),
  );
  try {
    const { stream } = endlessBody();
    const abort = new AbortController();
    const response = await fetch(`http://127.0.0.1:${server.addr.port}/bulk?format=ndjson`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: stream,
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.match(new TextDecoder().decode(first.value), /^\{"ip":"81\.2\.69\.142"/);
    abort.abort();
    await reader.cancel().catch(() => {});
    // The work stops: the count of lookups stops growing (the input would never end).
    let last = -1;
    const deadline = Date.now() + 10_000;
    while (lookups.count !== last) {
      assert.ok(Date.now() < deadline, "lookups went on after the client went away");
      last = lookups.count;
      for (let i = 0; i < 6; i++) await settle();
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("a 100,000-address request is answered in order, each line an item", async () => {
  const addresses = ["81.2.69.142", "9.9.9.9", "2a02:ec0::7", "1.2.3"];
  const count = 100_000;
  const body = Array.from({ length: count }, (_, i) => addresses[i % 4]).join("\n");
  const response = await post("/bulk?format=ndjson&get=countryCode", body, "text/plain");
  assert.equal(response.status, 200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  let seen = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const lines = (rest + value).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      const item = JSON.parse(line);
      assert.equal(item.ip, addresses[seen % 4], `line ${seen + 1}`);
      seen++;
    }
  }
  assert.equal(rest, "");
  assert.equal(seen, count);
});

/** A body of `chunk` repeated up to `bytes` in all, counting what is pulled from it. */
function hostileBody(chunk: string, bytes: number) {
  const state = { pulled: 0 };
  const piece = new TextEncoder().encode(chunk);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= bytes) return controller.close();
      state.pulled += piece.length;
      controller.enqueue(piece);
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

const HUNDRED_MB = 100 * 1024 * 1024;

Deno.test("a caller with no budget left gets its 429 before a byte of its body is read", async () => {
  const server = await limited(2);
  const spent = await post("/bulk", "8.8.8.8\n1.1.1.1\n", "text/plain", {}, server);
  assert.equal(spent.status, 200);
  await spent.body?.cancel();
  const { stream, state } = hostileBody("8.8.8.8\n", HUNDRED_MB);
  const refused = await post("/bulk", stream, "text/plain", {}, server);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("ratelimit-remaining"), "0");
  assert.match((await refused.json()).message, /^Rate limit exceeded/);
  assert.equal(state.pulled, 0, "not a byte of the body read");
});

Deno.test("100 MB of blank lines is refused once 16 KiB gave no address, having read a bounded part", async () => {
  const server = await limited(5);
  const { stream, state } = hostileBody("\n".repeat(4096), HUNDRED_MB);
  const response = await post("/bulk", stream, "text/plain", {}, server);
  assert.equal(response.status, 400);
  assert.match(
    (await response.json()).message,
    /^No address in 16384 bytes of the request body \(up to byte 16384\)/,
  );
  // The read-ahead may have taken more than was parsed, but nowhere near the whole body.
  assert.ok(state.pulled <= 4 * 1024 * 1024, `${state.pulled} bytes read`);
  // One unit was charged, before the body was read.
  assert.equal(response.headers.get("ratelimit-remaining"), "4");
});

Deno.test("a 100 MB single line fails in place at once, then the stream ends with a 400 final record", async () => {
  const server = await limited(5);
  const { stream, state } = hostileBody("z".repeat(4096), HUNDRED_MB);
  const response = await post("/bulk?format=ndjson", stream, "text/plain", {}, server);
  assert.equal(response.status, 200);
  const [item, last, ...rest] = (await response.text()).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.equal(item.ip, `${"z".repeat(64)}…`); // the echo, capped as always
  assert.match(item.error.message, /^Invalid IP address .*: too long/);
  assert.equal(last.incomplete.status, 400);
  assert.match(last.incomplete.message, /^No address in \d+ bytes of the request body/);
  assert.deepEqual(rest, []);
  assert.ok(state.pulled <= 4 * 1024 * 1024, `${state.pulled} bytes read`);
});

Deno.test("a streamed POST /bulk reads the record caches without filling them; GET /ip fills them", async () => {
  const data = await openedOnce(writeFixtureDataDir)(); // fresh caches of its own
  const fresh = await fixtureApp({ data });
  const misses = () => data.city!.cacheCounts().misses;
  const ip = "81.2.69.142";
  const missesOf = async (request: () => Response | Promise<Response>) => {
    const before = misses();
    await (await request()).text();
    return misses() - before;
  };
  const get = () => fresh.request(`/ip/${ip}`);
  const stream = () => post("/bulk?format=ndjson", `${ip}\n${ip}\n`, "text/plain", {}, fresh);
  assert.ok(await missesOf(stream) > 0, "the stream decoded the record");
  assert.ok(await missesOf(get) > 0, "the stream left the record out of the cache");
  assert.equal(await missesOf(get), 0, "a lookup keeps it");
  assert.equal(await missesOf(stream), 0, "a stream reads what the cache holds");
});
