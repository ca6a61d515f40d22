import assert from "node:assert/strict";
import { Hono } from "hono";
import type { AppEnv } from "../../../src/service/http/env.ts";
import { ROUTE_LABELS, ROUTES } from "../../../src/service/app/app.ts";
import { handlerPatterns } from "../../../src/service/http/route.ts";
import { applyAnswerRules } from "../../../src/service/http/rules/rules.ts";
import { instrument } from "../../../src/service/ops/instrument.ts";
import { Metrics } from "../../../src/service/ops/metrics.ts";

Deno.test("a counted, unlogged answer's body is never read: a string body stays static", async () => {
  const metrics = new Metrics({ dataSet: () => null, version: "test", routes: ROUTE_LABELS });
  const instrumentation = instrument({
    metrics,
    log: "errors",
    logFullIp: false,
    writeLine: () => {},
    clientAddress: (peer) => peer,
    routes: ROUTE_LABELS,
  });
  let made: Response | null = null;
  const answered = applyAnswerRules([instrumentation.rule], assert.fail);
  const app = new Hono<AppEnv>();
  app.on(
    "GET",
    handlerPatterns(ROUTES[0]!, ROUTES),
    answered((c) => {
      c.set("route", 0);
      made = new Response('{"success":true}', { headers: { "content-type": "application/json" } });
      // Reading `body` would make a stream of the string (and slow Deno.serve's answer down).
      Object.defineProperty(made, "body", {
        get: () => assert.fail("the instrumentation read the body"),
      });
      return made;
    }),
  );
  const response = await app.request("/ip/8.8.8.8");
  assert.equal(response, made, "the answer passed on as it was made");
  assert.equal(instrumentation.inFlight(), 0);
  assert.match(metrics.render(), /ipintel_http_requests_total\{[^}]*route="\/ip\/\{ip\}"[^}]*\} 1/);
});
