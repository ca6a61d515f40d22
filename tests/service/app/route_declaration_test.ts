import assert from "node:assert/strict";
import { ROUTES } from "../../../src/service/app/app.ts";
import { type Route, routeLabels } from "../../../src/service/http/route.ts";
import { instrument } from "../../../src/service/ops/instrument.ts";
import { Metrics } from "../../../src/service/ops/metrics.ts";
import { fixtureApp, keyRequiredAccess, peer } from "../../_helpers.ts";

/** A route a test adds: one declaration, nothing else. */
const ECHO: Route = {
  path: "/echo/{word}",
  methods: ["GET"],
  access: "key",
  doc: {
    get: { summary: "The word, back", responses: { "200": { description: "The word" } } },
  },
  handler: (tools) => async (c) => {
    const refusal = await tools.admission.charge(c, c.get("caller"), 1);
    if (refusal) throw refusal;
    return c.json({ success: true, data: { word: c.req.param("word") } });
  },
};

async function appWithEcho() {
  const routes = [...ROUTES, ECHO];
  const labels = routeLabels(routes);
  const metrics = new Metrics({ dataSet: () => null, version: "test", routes: labels });
  const instrumentation = instrument({
    metrics,
    log: "off",
    logFullIp: false,
    writeLine: () => {},
    clientAddress: (peer) => peer,
    routes: labels,
  });
  const { access, key } = await keyRequiredAccess("acme", 2);
  const app = await fixtureApp({
    routes,
    access,
    instrumentation,
    metrics: { render: () => metrics.render(), token: null },
  });
  const get = (path: string, init: RequestInit = {}) =>
    app.fetch(new Request(`http://localhost${path}`, init), peer("203.0.113.9"));
  return { get, key, metrics };
}

Deno.test("a route declared once is routed, keyed, limited, documented, counted, and answers OPTIONS and 405", async () => {
  const { get, key } = await appWithEcho();
  const withKey = { headers: { "x-api-key": key } };

  // Routed, with its parameter.
  const echoed = await get("/echo/hello", withKey);
  assert.equal(echoed.status, 200);
  assert.deepEqual(await echoed.json(), { success: true, data: { word: "hello" } });
  assert.equal(echoed.headers.get("ratelimit-limit"), "2", "the app's rules decorate it");

  // Keyed: no key, a 401; over the key's limit, a 429.
  const keyless = await get("/echo/hello");
  assert.equal(keyless.status, 401);
  await (await get("/echo/again", withKey)).body?.cancel();
  assert.equal((await get("/echo/third", withKey)).status, 429);

  // Its own methods in the preflight and in a 405's Allow.
  const preflight = await get("/echo/x", { method: "OPTIONS" });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-methods"), "GET,HEAD");
  const post = await get("/echo/x", { ...withKey, method: "POST" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");

  // Documented in /openapi.json with its operations.
  const doc = await (await get("/openapi.json")).json();
  assert.equal(doc.paths["/echo/{word}"].get.summary, "The word, back");

  // Counted under its own label.
  const metrics = await (await get("/metrics")).text();
  const count = (status: number) =>
    Number(
      new RegExp(
        `ipintel_http_requests_total\\{method="GET",route="/echo/\\{word\\}",status="${status}"\\} (\\d+)`,
      ).exec(metrics)?.[1] ?? 0,
    );
  assert.equal(count(200), 2);
  assert.equal(count(401), 1);
  assert.equal(count(429), 1);
});

Deno.test("the metric labels are the routes' families, in their order, then unmatched", () => {
  const labels = routeLabels(ROUTES);
  assert.equal(labels[0], "/ip/{ip}");
  assert.equal(labels.at(-1), "unmatched");
  assert.ok(labels.includes("/ipinfo/{path}"), "ipinfo's routes share one label");
  assert.equal(labels.filter((l) => l.startsWith("/ipinfo")).length, 1);
  assert.equal(new Set(labels).size, labels.length);
});
