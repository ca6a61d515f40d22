/**
 * Every 401 names its scheme (RFC 9110; RFC 6750 for Bearer): the native
 * keyed routes, /mcp among them, and ip-api answer `Bearer realm="ipintel"`;
 * MaxMind's routes, whose key is Basic auth's password, `Basic realm="ipintel"`.
 */

import assert from "node:assert/strict";
import { ROUTES } from "../../../src/service/app/app.ts";
import { peer } from "../../_helpers.ts";
import { keyedApp } from "../mcp/_mcp_app.ts";

/** A path of `route` with its parameter filled in. */
const pathOf = (path: string) =>
  path.replace("{ip}", "81.2.69.142").replace("{ip_list}", "81.2.69.142").replace("{n}", "15169")
    .replace("{path}", "81.2.69.142");

Deno.test('every keyed route\'s 401 carries WWW-Authenticate: Bearer realm="ipintel"', async () => {
  const { app } = await keyedApp(100);
  const keyed = ROUTES.filter((r) => r.access === "key");
  assert.ok(keyed.some((r) => r.path === "/mcp"), "/mcp is a keyed route");
  for (const route of keyed) {
    for (const method of route.methods) {
      const sent: Record<string, string>[] = [
        {},
        { "x-api-key": "ipi_wrong" },
        { authorization: "Bearer ipi_no" },
      ];
      for (const headers of sent) {
        const response = await app.fetch(
          new Request(`http://localhost${pathOf(route.path)}`, {
            method,
            headers: { "content-type": "application/json", ...headers },
            body: method === "POST" ? "{}" : undefined,
          }),
          peer("203.0.113.7"),
        );
        const what = `${method} ${route.path} ${JSON.stringify(headers)}`;
        assert.equal(response.status, 401, what);
        assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="ipintel"', what);
        assert.match((await response.json()).message, /Invalid or missing API key/, what);
      }
    }
  }
});

Deno.test("the compatible APIs' 401s name their own scheme: Basic for MaxMind, Bearer for ip-api (which takes it)", async () => {
  const { app, key } = await keyedApp(100);
  const get = (path: string, headers: Record<string, string> = {}) =>
    app.fetch(new Request(`http://localhost${path}`, { headers }), peer("203.0.113.7"));
  for (const service of ["country", "city", "insights"]) {
    const response = await get(`/geoip/v2.1/${service}/81.2.69.142`);
    assert.equal(response.status, 401, service);
    assert.equal(response.headers.get("www-authenticate"), 'Basic realm="ipintel"', service);
    assert.equal((await response.json()).code, "AUTHORIZATION_INVALID");
  }
  const ipapi = await get("/json/81.2.69.142");
  assert.equal(ipapi.status, 401);
  assert.equal(ipapi.headers.get("www-authenticate"), 'Bearer realm="ipintel"');
  await ipapi.body?.cancel();
  const bearer = await get("/json/81.2.69.142", { authorization: `Bearer ${key}` });
  assert.equal(bearer.status, 200, "ip-api takes the scheme its 401 names");
  assert.equal((await bearer.json()).status, "success");
});
