import assert from "node:assert/strict";
import { instrument } from "../../src/ops/instrument.ts";
import { Metrics } from "../../src/ops/metrics.ts";

Deno.test("a counted, unlogged answer's body is never read: a string body stays static", async () => {
  const metrics = new Metrics({ dataSet: () => null, version: "test" });
  let made: Response | null = null;
  const { handler } = instrument(() => {
    made = new Response('{"success":true}', { headers: { "content-type": "application/json" } });
    // Reading `body` would make a stream of the string (and slow Deno.serve's answer down).
    Object.defineProperty(made, "body", {
      get: () => assert.fail("the instrumentation read the body"),
    });
    return made;
  }, {
    metrics,
    log: "errors",
    logFullIp: false,
    writeLine: () => {},
    clientAddress: (peer) => peer,
  });
  const response = await handler(new Request("http://localhost/ip/8.8.8.8"), undefined);
  assert.equal(response, made, "the answer passed on as it was made");
  assert.match(metrics.render(), /ipintel_http_requests_total\{[^}]*route="\/ip\/\{ip\}"[^}]*\} 1/);
});
