/**
 * `GET /auth` in-process: the caller read as `/me` reads it, keys and one unit
 * per decision, the decision's status and headers, the counts in `/metrics`,
 * the policy's version in `/status`, and the rule in the access log line.
 */

import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import type { ServedSlot } from "../../../src/service/http/env.ts";
import { PolicyGate } from "../../../src/service/policy/gate.ts";
import { createServer } from "../../../src/process/server/server.ts";
import { fixtureApp, fixtureLookup, keyRequiredAccess, peer } from "../../_helpers.ts";
import { gateDataSet } from "./_gate_data.ts";

const POLICY = {
  default: "allow",
  cacheSeconds: 60,
  rules: [
    { name: "office", action: "allow", cidr: ["185.220.101.4/32"] },
    { name: "no-tor", action: "deny", security: ["tor"] },
    { name: "embargo", action: "deny", country: ["US"] },
    { name: "watch", action: "report", security: ["vpn", "hosting"] },
  ],
};

async function withGate(test: (gate: PolicyGate) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-auth-" });
  await Deno.writeTextFile(`${dir}/policy.json`, JSON.stringify(POLICY));
  const gate = await PolicyGate.open(`${dir}/policy.json`, { report: () => {} });
  try {
    await test(gate);
  } finally {
    gate.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** The app with keys required; `key` has `limit` requests a minute; the proxy is 127.0.0.1. */
async function gateApp(gate: PolicyGate | null, limit = 100) {
  const data = await gateDataSet();
  const lookup = await fixtureLookup(undefined, data);
  const { access, key } = await keyRequiredAccess("edge-proxy", limit);
  const services: ServedSlot = { current: servedOf(data, lookup) };
  const app = await fixtureApp({
    slot: services,
    config: { bulkMax: 10, trustedProxies: ["127.0.0.1"] },
    access,
    policy: gate,
    logError: (error) => {
      throw error;
    },
  });
  /** GET /auth from `from`, as a proxy there sends it. */
  const auth = (from: string, headers: Record<string, string> = {}, path = "/auth") =>
    app.fetch(new Request(`http://localhost${path}`, { headers }), peer(from));
  return { app, key, auth, services };
}

Deno.test("/auth judges the forwarded client: 204 or 403, the headers, no body, one unit each", async () => {
  await withGate(async (gate) => {
    const { key, auth } = await gateApp(gate, 5);
    const table: [string, number, string, string, string][] = [
      ["8.8.8.8", 403, "embargo", "US", ""],
      ["81.2.69.160", 204, "default", "GB", ""],
      ["185.220.101.34", 403, "no-tor", "DE", "tor"],
      ["185.220.101.4", 204, "office", "DE", "tor"],
      ["2.26.157.10", 204, "watch", "GB", "vpn"],
    ];
    let remaining = 5;
    for (const [client, status, rule, country, risk] of table) {
      const response = await auth("127.0.0.1", { "x-forwarded-for": client, "x-api-key": key });
      assert.equal(response.status, status, client);
      assert.equal(await response.text(), "", client);
      assert.equal(response.headers.get("x-ip-policy-rule"), rule, client);
      assert.equal(response.headers.get("x-ip-country"), country, client);
      assert.equal(response.headers.get("x-ip-risk"), risk, client);
      assert.equal(response.headers.get("cache-control"), "max-age=60", client);
      assert.equal(response.headers.get("ratelimit-remaining"), String(--remaining), client);
    }
    // The sixth decision is over the key's limit: 429, not a decision.
    const over = await auth("127.0.0.1", { "x-forwarded-for": "8.8.8.8", "x-api-key": key });
    assert.equal(over.status, 429);
    assert.equal(over.headers.get("x-ip-policy-rule"), null);
    await over.body?.cancel();
    assert.deepEqual(Object.fromEntries(gate.counter.snapshot()), {
      embargo: { allow: 0, deny: 1, report: 0 },
      default: { allow: 1, deny: 0, report: 0 },
      "no-tor": { allow: 0, deny: 1, report: 0 },
      office: { allow: 1, deny: 0, report: 0 },
      watch: { allow: 0, deny: 0, report: 1 },
    });
  });
});

Deno.test("/auth reads the caller as /me does: no key, no decision; untrusted peers are themselves", async () => {
  await withGate(async (gate) => {
    const { key, auth } = await gateApp(gate);
    const unkeyed = await auth("127.0.0.1", { "x-forwarded-for": "8.8.8.8" });
    assert.equal(unkeyed.status, 401);
    await unkeyed.body?.cancel();
    // A key in the query works too (Traefik's way).
    const query = await auth("127.0.0.1", { "x-forwarded-for": "8.8.8.8" }, `/auth?apiKey=${key}`);
    assert.equal(query.status, 403);
    // From an untrusted peer the forwarding header is ignored: the peer itself is judged.
    const direct = await auth("81.2.69.160", { "x-forwarded-for": "8.8.8.8", "x-api-key": key });
    assert.equal(direct.status, 204);
    assert.equal(direct.headers.get("x-ip-country"), "GB");
    // A malformed header from the trusted proxy is refused, not guessed at.
    const bad = await auth("127.0.0.1", { "x-forwarded-for": "8.8.8.8x", "x-api-key": key });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Invalid X-Forwarded-For header from a trusted proxy/);
    // An address no database knows is still judged (cidr rules and the default).
    const loopback = await auth("127.0.0.1", { "x-api-key": key });
    assert.equal(loopback.status, 204);
    assert.equal(loopback.headers.get("x-ip-policy-rule"), "default");
    assert.equal(loopback.headers.get("x-ip-country"), "");
  });
});

Deno.test("while the data loads, /auth answers 503 once charged, as every lookup route does (tests/service/http/answer_path_test.ts)", async () => {
  await withGate(async (gate) => {
    const { key, auth, services } = await gateApp(gate, 5);
    const loaded = services.current;
    services.current = null;
    const loading = await auth("127.0.0.1", { "x-forwarded-for": "8.8.8.8", "x-api-key": key });
    assert.equal(loading.status, 503);
    await loading.body?.cancel();
    services.current = loaded;
    const first = await auth("127.0.0.1", { "x-forwarded-for": "8.8.8.8", "x-api-key": key });
    assert.equal(first.status, 403);
    assert.equal(first.headers.get("ratelimit-remaining"), "3"); // the 503 cost its unit
    assert.deepEqual([...gate.counter.snapshot().keys()], ["embargo"]);
  });
});

Deno.test("without IPINTEL_POLICY, /auth is a 404 that says what to set", async () => {
  const { key, auth } = await gateApp(null);
  const response = await auth("127.0.0.1", { "x-api-key": key });
  assert.equal(response.status, 404);
  assert.match(
    await response.text(),
    /No forward-auth policy: start the server with IPINTEL_POLICY/,
  );
});

Deno.test("the server: decision counts in /metrics, the version in /status, the denying rule logged", async () => {
  await withGate(async (gate) => {
    const lines: string[] = [];
    const server = createServer({
      config: {
        bulkMax: 10,
        trustedProxies: ["127.0.0.1"],
        forwardedHeader: "x-forwarded-for",
        corsOrigins: ["*"],
        metrics: true,
        metricsToken: null,
        log: "errors",
        logFullIp: true,
      },
      writeLog: (text) => lines.push(...text.trimEnd().split("\n")),
      logFlushMs: 0,
      policy: gate,
    });
    const data = await gateDataSet();
    server.install(servedOf(data, await fixtureLookup(undefined, data)));
    const get = async (path: string, from?: string) => {
      const headers = from ? { "x-forwarded-for": from } : undefined;
      const response = await server.handler(
        new Request(`http://localhost${path}`, { headers }),
        peer("127.0.0.1"),
      );
      return { status: response.status, text: await response.text() };
    };
    assert.equal((await get("/auth", "185.220.101.34")).status, 403);
    assert.equal((await get("/auth", "185.220.101.82")).status, 403);
    assert.equal((await get("/auth", "81.2.69.160")).status, 204);
    server.flushLog();
    const metrics = (await get("/metrics")).text;
    assert.match(metrics, /\nipintel_policy_decisions_total\{rule="no-tor",action="deny"\} 2\n/);
    assert.match(metrics, /\nipintel_policy_decisions_total\{rule="default",action="allow"\} 1\n/);
    const status = JSON.parse((await get("/status")).text).data;
    // The file by name: /status names no directory of the server without IPINTEL_STATUS_DETAIL.
    assert.deepEqual(status.policy, { ...gate.status(), file: "policy.json" });
    assert.match(status.policy.version, /^[0-9a-f]{12}$/);
    // IPINTEL_LOG=errors: the denials are logged with their rule and client; the 204 is not.
    const denied = lines.map((line) => JSON.parse(line)).filter((entry) => entry.route === "/auth");
    assert.deepEqual(
      denied.map(({ status, rule, client }) => ({ status, rule, client })),
      [
        { status: 403, rule: "no-tor", client: "185.220.101.34" },
        { status: 403, rule: "no-tor", client: "185.220.101.82" },
      ],
    );
  });
});

Deno.test("each Response is the gate's own copy: headers set on one never reach the next", async () => {
  await withGate(async (gate) => {
    const data = await gateDataSet();
    const served = servedOf(data, await fixtureLookup(undefined, data));
    const first = gate.respond(served, "8.8.8.8");
    first.headers.set("x-request-id", "one");
    first.headers.set("x-ip-country", "changed by a middleware");
    const second = gate.respond(served, "8.8.8.8");
    assert.equal(second.status, 403);
    assert.equal(second.headers.get("x-request-id"), null);
    assert.equal(second.headers.get("x-ip-country"), "US");
    assert.equal(await second.text(), "");
    // Another answer is its own Response, not the cached one.
    const gb = gate.respond(served, "81.2.69.160");
    assert.deepEqual([gb.status, gb.headers.get("x-ip-country")], [204, "GB"]);
  });
});
