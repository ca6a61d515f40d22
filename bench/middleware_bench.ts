/**
 * What one layer of Hono's middleware composition costs per request, in
 * process: the same route behind 0, 1, 4 and 8 pass-through middleware
 * (`async (c, next) => { await next(); }`), and the same route with no
 * middleware answering through two awaited promises, as a handler that
 * awaited its parameters and its rate charge did. It is why the app runs its
 * answer rules (src/service/http/rules/) around each handler rather than as
 * middleware, and why a lookup that waits for nothing answers without a promise.
 *
 * Run: `deno bench bench/middleware_bench.ts`.
 *
 * @module
 */

import { Hono } from "hono";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../src/service/http/env.ts";
import { applyAnswerRules } from "../src/service/http/rules/rules.ts";

const BODY = JSON.stringify({ success: true, data: { ip: "203.0.113.42", note: "x".repeat(500) } });
const HEADERS = { "content-type": "application/json; charset=utf-8" };

function appWith(layers: number): Hono {
  const app = new Hono({ router: new RegExpRouter() });
  for (let i = 0; i < layers; i++) {
    app.use(async (_c, next) => {
      await next();
    });
  }
  app.get("/ip/:ip{.+}", (c) => c.body(BODY, 200, HEADERS));
  return app;
}

const requests = Array.from(
  { length: 1000 },
  (_, i) => new Request(`http://localhost/ip/198.51.100.${i % 250}`),
);
let i = 0;
for (const layers of [0, 1, 4, 8]) {
  const app = appWith(layers);
  Deno.bench(
    `${layers} middleware layer(s)`,
    { group: "layers", baseline: layers === 0 },
    async () => {
      await (await app.fetch(requests[i++ % requests.length]!)).text();
    },
  );
}

// The direct path with an asynchronous handler: what two awaits cost a request.
const ready = Promise.resolve(null);
const awaiting = new Hono({ router: new RegExpRouter() });
awaiting.get("/ip/:ip{.+}", async (c) => {
  await ready;
  await ready;
  return c.body(BODY, 200, HEADERS);
});
Deno.bench("0 layers, a handler that awaits twice", { group: "layers" }, async () => {
  await (await awaiting.fetch(requests[i++ % requests.length]!)).text();
});

// The app's six answer rules (instrumentation, data set, CORS, RateLimit, HEAD, Host), each a
// `before` and an `after` doing nothing, as the one wrapper the app uses and as six `app.use`
// middleware made with Hono's createMiddleware: the choice docs/design.md states.
const RULES = 6;
const noRule = { before: () => null, after: () => {} };
const wrapped = new Hono<AppEnv>({ router: new RegExpRouter() });
const withRules = applyAnswerRules(
  Array(RULES).fill(noRule),
  () => new Response(null, { status: 500 }),
);
wrapped.get("/ip/:ip{.+}", withRules((c) => c.body(BODY, 200, HEADERS)));
const layered = new Hono<AppEnv>({ router: new RegExpRouter() });
for (let r = 0; r < RULES; r++) {
  layered.use(createMiddleware<AppEnv>(async (c, next) => {
    noRule.before();
    await next();
    noRule.after();
    void c;
  }));
}
layered.get("/ip/:ip{.+}", (c) => c.body(BODY, 200, HEADERS));
Deno.bench(
  "6 answer rules, one wrapper (the app's)",
  { group: "rules", baseline: true },
  async () => {
    await (await wrapped.fetch(requests[i++ % requests.length]!)).text();
  },
);
Deno.bench("6 answer rules as app.use middleware", { group: "rules" }, async () => {
  await (await layered.fetch(requests[i++ % requests.length]!)).text();
});
