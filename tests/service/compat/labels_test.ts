import assert from "node:assert/strict";
import { routeLabel } from "../app/_route_label.ts";
import { parsePrometheus, sampleValue, testServer } from "../ops/_server.ts";

Deno.test("compatible routes get pattern labels, never an address", async () => {
  const cases: [string, string, string?][] = [
    ["/geoip/v2.1/country/8.8.8.8", "/geoip/v2.1/country/{ip}"],
    ["/geoip/v2.1/city/me", "/geoip/v2.1/city/{ip}"],
    ["/geoip/v2.1/insights/2001:db8::1?x=1", "/geoip/v2.1/insights/{ip}"],
    ["/geoip/v2.1/asn/8.8.8.8", "unmatched"],
    ["/ipinfo", "/ipinfo/{path}"],
    ["/ipinfo/", "/ipinfo/{path}"],
    ["/ipinfo/8.8.8.8?token=secret", "/ipinfo/{path}"],
    ["/ipinfo/8.8.8.8/city", "/ipinfo/{path}"],
    ["/ipinfo/batch", "/ipinfo/{path}", "POST"],
    ["/json", "/json/{ip}"],
    ["/json/", "/json/{ip}"],
    ["/json/8.8.8.8?key=secret", "/json/{ip}"],
    ["/batch", "/batch", "POST"],
    ["/batches", "unmatched"],
  ];
  for (const [path, expected, method] of cases) {
    assert.equal(await routeLabel(path, method), expected, path);
  }
});

Deno.test("compatible routes are counted and logged like the native ones", async () => {
  const t = await testServer({ log: "on" });
  await (await t.request("/geoip/v2.1/city/81.2.69.142")).text();
  await (await t.request("/ipinfo/81.2.69.142/city?token=x")).text();
  await (await t.request("/json/1.2.3")).text();
  const batch = await t.request("/batch", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(["81.2.69.142"]),
  });
  await batch.text();
  const routes = t.lines().map((line) => JSON.parse(line).route);
  assert.deepEqual(routes, [
    "/geoip/v2.1/city/{ip}",
    "/ipinfo/{path}",
    "/json/{ip}",
    "/batch",
  ]);
  assert.ok(!t.lines().join("\n").includes("81.2.69.142"), "no address in the log");
  const samples = parsePrometheus(await (await t.request("/metrics")).text());
  const count = (route: string, method = "GET") =>
    sampleValue(samples, "ipintel_http_requests_total", { method, route, status: "200" });
  assert.equal(count("/geoip/v2.1/city/{ip}"), 1);
  assert.equal(count("/batch", "POST"), 1);
});
