import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import {
  type AccessLogEntry,
  accessLogLine,
  createAccessLogLine,
  truncateAddress,
} from "../../../src/service/ops/access_log.ts";
import { Lookup } from "../../../src/core/lookup/lookup.ts";
import { fixtureDataSet, fixtureLookup } from "../../_helpers.ts";
import { testServer } from "./_server.ts";

const KEY = "ipi_SuperSecretKeyValue0123456789";

Deno.test("one JSON line per request: time, id, method, route, status, duration, bytes, client, data version", async () => {
  const t = await testServer({ log: "on" });
  const response = await t.request("/ip/81.2.69.142", {}, "81.2.69.142");
  const body = await response.text();
  const [line, ...rest] = t.lines();
  assert.equal(rest.length, 0);
  const entry = JSON.parse(line!);
  assert.deepEqual(Object.keys(entry), [
    "time",
    "requestId",
    "method",
    "route",
    "status",
    "durationMs",
    "bytes",
    "client",
    "dataVersion",
  ]);
  assert.ok(Math.abs(Date.parse(entry.time) - Date.now()) < 60_000, entry.time);
  assert.equal(entry.requestId, response.headers.get("x-request-id"));
  assert.match(entry.requestId, /^[0-9a-f]{12}-[0-9a-z]+$/);
  assert.deepEqual([entry.method, entry.route, entry.status], ["GET", "/ip/{ip}", 200]);
  assert.equal(entry.bytes, new TextEncoder().encode(body).length);
  assert.ok(entry.durationMs >= 0);
  assert.equal(entry.client, "81.2.69.0/24");
});

Deno.test("no log line holds an API key (query, header or bearer) or a full client address", async () => {
  const t = await testServer({ log: "on" });
  const sent: [string, Record<string, string>, string][] = [
    [`/ip/81.2.69.142?apiKey=${KEY}`, {}, "81.2.69.142"],
    ["/ip/81.2.69.142", { "x-api-key": KEY }, "2a02:ec0:1234:5678::9"],
    ["/me", { authorization: `Bearer ${KEY}` }, "198.51.100.77"],
    [`/bulk/81.2.69.142,9.9.9.9?apiKey=${KEY}&format=csv`, {}, "203.0.113.200"],
    [`/nope?apiKey=${KEY}`, {}, "192.0.2.33"],
  ];
  for (const [path, headers, from] of sent) await (await t.request(path, { headers }, from)).text();
  const lines = t.lines();
  assert.equal(lines.length, sent.length);
  // Searched without the time and duration, whose digits can spell ".77" or ".200" by chance.
  const text = lines.map((l) => {
    const { time: _time, durationMs: _duration, ...rest } = JSON.parse(l);
    return JSON.stringify(rest);
  }).join("\n");
  for (
    const secret of [
      KEY,
      "SuperSecret",
      "apiKey",
      "81.2.69.142",
      "9.9.9.9",
      "5678",
      ".77",
      ".200",
      ".33",
    ]
  ) {
    assert.ok(!text.includes(secret), `${secret} in ${text}`);
  }
  assert.deepEqual(lines.map((l) => JSON.parse(l).client), [
    "81.2.69.0/24",
    "2a02:ec0:1234::/48",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "192.0.2.0/24",
  ]);
  assert.deepEqual(lines.map((l) => JSON.parse(l).route), [
    "/ip/{ip}",
    "/ip/{ip}",
    "/me",
    "/bulk/{ip_list}",
    "unmatched",
  ]);
});

Deno.test("IPINTEL_LOG_FULL_IP=true logs whole addresses; trusted proxies give the client's", async () => {
  const t = await testServer({ log: "on", logFullIp: true, trustedProxies: ["10.0.0.0/8"] });
  await (await t.request("/health", {}, "2a02:ec0:1234:5678::9")).text();
  await (await t.request("/health", { headers: { "x-forwarded-for": "81.2.69.142" } }, "10.1.2.3"))
    .text();
  assert.deepEqual(t.lines().map((l) => JSON.parse(l).client), [
    "2a02:ec0:1234:5678::9",
    "81.2.69.142",
  ]);
});

Deno.test("truncateAddress keeps the /24 of IPv4 and the /48 of IPv6", () => {
  const cases: [string, string][] = [
    ["81.2.69.142", "81.2.69.0/24"],
    ["::ffff:81.2.69.142", "81.2.69.0/24"],
    ["2001:db8:abcd:12::1", "2001:db8:abcd::/48"],
    ["2001:db8::1", "2001:db8::/48"],
    ["::1", "::/48"],
    ["not-an-ip", "unknown"],
  ];
  for (const [address, expected] of cases) assert.equal(truncateAddress(address), expected);
});

Deno.test("X-Request-Id is honoured when sane, replaced when not, and echoed either way", async () => {
  const t = await testServer({ log: "on" });
  const cases: [string, boolean][] = [
    ["3f2c9a1e-7b4d-4e0a-9c1b-2d5e8f6a7b3c", true],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true],
    ["x".repeat(128), true],
    ["x".repeat(129), false],
    ["bad id with spaces", false],
    ['quote"and\\slash', false],
  ];
  for (const [given, honoured] of cases) {
    const response = await t.request("/health", { headers: { "x-request-id": given } });
    await response.text();
    const echoed = response.headers.get("x-request-id")!;
    assert.equal(echoed === given, honoured, given);
    if (!honoured) assert.match(echoed, /^[0-9a-f]{12}-[0-9a-z]+$/);
  }
  const ids = t.lines().map((l) => JSON.parse(l).requestId);
  assert.equal(ids.length, cases.length);
  assert.equal(ids[0], cases[0]![0]);
  assert.equal(new Set(ids).size, ids.length, "made ids are unique");
});

Deno.test("IPINTEL_LOG=errors logs (and names in X-Request-Id) 4xx and 5xx only; off logs nothing", async () => {
  const errors = await testServer({ log: "errors" });
  const echoed: (string | null)[] = [];
  for (const path of ["/ip/81.2.69.142", "/ip/1.2.3", "/health", "/nope"]) {
    const response = await errors.request(path);
    await response.text();
    echoed.push(response.headers.get("x-request-id"));
  }
  const lines = errors.lines().map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.route, l.status]), [
    ["/ip/{ip}", 404],
    ["unmatched", 404],
  ]);
  // Only a response with a log line names one.
  assert.deepEqual(echoed, [null, lines[0].requestId, null, lines[1].requestId]);
  const off = await testServer({ log: "off" });
  const response = await off.request("/ip/1.2.3");
  await response.text();
  assert.deepEqual(off.lines(), []);
  assert.equal(response.headers.get("x-request-id"), null);
});

Deno.test("a 5xx logs the detail with the request id; the client sees a generic message", async () => {
  const t = await testServer({ log: "errors" });
  const fail = (): never => {
    throw new Error("database page checksum mismatch at offset 4242");
  };
  const broken = new class extends Lookup {
    override find = fail;
    override detail = fail;
  }(await fixtureLookup());
  t.server.install(servedOf(await fixtureDataSet(), broken));
  const response = await t.request("/ip/81.2.69.142", { headers: { "x-request-id": "req-500" } });
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.deepEqual(body, { success: false, message: "Internal server error" });
  assert.equal(t.errors.length, 1);
  assert.match(
    t.errors[0]!,
    /^ipintel: internal error in request req-500: Error: database page checksum mismatch at offset 4242/,
  );
  const [line] = t.lines();
  assert.deepEqual([JSON.parse(line!).requestId, JSON.parse(line!).status], ["req-500", 500]);
});

Deno.test("a streamed answer is logged when it ends, its bytes counted as they pass; in flight until then", async () => {
  const t = await testServer({ log: "on" });
  const response = await t.request("/bulk?format=ndjson", {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "81.2.69.142\n9.9.9.9\n",
  });
  assert.equal(t.lines().length, 0, "no line before the answer has been sent");
  assert.equal(t.server.inFlight(), 1, "a stream being sent is in flight (shutdown waits for it)");
  const body = await response.text();
  assert.equal(t.server.inFlight(), 0);
  const [line] = t.lines();
  const entry = JSON.parse(line!);
  assert.deepEqual([entry.method, entry.route, entry.status], ["POST", "/bulk", 200]);
  assert.equal(entry.bytes, new TextEncoder().encode(body).length);
  assert.equal(entry.requestId, response.headers.get("x-request-id"));
});

Deno.test("an access log writer formats its time once per millisecond, each writer on its own", () => {
  const entry: AccessLogEntry = {
    requestId: "r",
    method: "GET",
    route: "/ip/{ip}",
    status: 200,
    durationMs: 1.23456,
    bytes: 10,
    client: "81.2.69.0/24",
    dataVersion: null,
  };
  const first = createAccessLogLine();
  const second = createAccessLogLine();
  const time = Date.UTC(2024, 0, 2, 3, 4, 5, 6);
  for (
    const [write, at] of [[first, time], [first, time], [second, time + 1], [
      first,
      time + 1,
    ]] as const
  ) {
    const line = write(entry, at);
    assert.equal(line, accessLogLine(entry, at));
    assert.equal(JSON.parse(line).time, new Date(at).toISOString());
  }
});
