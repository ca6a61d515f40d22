import assert from "node:assert/strict";
import { ROUTES } from "../../../src/service/app/app.ts";
import { familyOf } from "../../../src/service/http/route.ts";
import { routeLabel } from "../app/_route_label.ts";

const route = (url: string) => routeLabel(url.replace(/^http:\/\/[^/]*/, ""));

Deno.test("a request's route label is its route pattern, never the path, query or fragment", async () => {
  const cases: [string, string][] = [
    ["http://h/ip/8.8.8.8", "/ip/{ip}"],
    ["http://h:8000/ip/2001:db8::1?apiKey=secret&get=city", "/ip/{ip}"],
    ["http://h/ip/81.2.69.142%2F24#x", "/ip/{ip}"],
    ["http://h/ip", "/ip/{ip}"],
    ["http://h/ip/", "/ip/{ip}"],
    ["http://h/ip/?apiKey=k", "/ip/{ip}"],
    ["http://h/me?format=xml", "/me"],
    ["http://h/me/", "unmatched"],
    ["http://h/bulk/1.1.1.1,8.8.8.8", "/bulk/{ip_list}"],
    ["http://h/bulk", "/bulk"],
    ["http://h/bulk/", "/bulk/{ip_list}"],
    ["http://h/health", "/health"],
    ["http://h/ready?x=1", "/ready"],
    ["http://h/metrics", "/metrics"],
    ["http://h/openapi.json", "/openapi.json"],
    ["http://h/", "/"],
    ["http://h/assets/app.3f9a.js", "/assets/{name}"],
    ["http://h/assets/", "/assets/{name}"],
    ["http://h/iphone", "unmatched"],
    ["http://h/favicon.ico", "unmatched"],
  ];
  for (const [url, expected] of cases) assert.equal(await route(url), expected, url);
});

Deno.test("every documented path is its route's label (a compatible API's family: the family's)", async () => {
  const families = new Map(ROUTES.map((r) => [r.path, familyOf(r)] as const));
  for (const path of families.keys()) {
    // A documented `{param}` stands for a value: one without braces is the family's too.
    const sample = path.replaceAll("{ip}", "8.8.8.8").replaceAll("{field}", "city");
    const method = path === "/bulk" || path.endsWith("batch") ? "POST" : "GET";
    assert.equal(await routeLabel(sample, method), families.get(path), path);
  }
});
