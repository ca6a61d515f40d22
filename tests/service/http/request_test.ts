import assert from "node:assert/strict";
import { splitBulkList } from "../../../src/service/bulk/items.ts";
import { fixtureApp } from "../../_helpers.ts";

// What a new user tries: spaces after commas, a trailing comma, a browser preflight.

const app = await fixtureApp();

async function bulkIps(path: string) {
  const response = await app.request(path);
  const body = await response.json();
  return { status: response.status, items: body.data?.responseArray, message: body.message };
}

Deno.test("bulk items are trimmed of spaces and tabs, and a trailing comma adds no item", async () => {
  const cases: [string, string[]][] = [
    ["/bulk/81.2.69.142,%209.9.9.9?get=ip", ["81.2.69.142", "9.9.9.9"]],
    ["/bulk/%20%0981.2.69.142%09,9.9.9.9%20%20?get=ip", ["81.2.69.142", "9.9.9.9"]],
    ["/bulk/81.2.69.142,9.9.9.9,?get=ip", ["81.2.69.142", "9.9.9.9"]],
    ["/bulk/81.2.69.142,%20?get=ip", ["81.2.69.142"]],
    ["/bulk/81.2.69.142%2C%209.9.9.9%2C?get=ip", ["81.2.69.142", "9.9.9.9"]],
  ];
  for (const [path, ips] of cases) {
    const { status, items } = await bulkIps(path);
    assert.equal(status, 200, path);
    assert.deepEqual(items, ips.map((ip) => ({ ip })), path);
  }
});

Deno.test("an empty item still fails in place, like an empty string in POST /bulk", async () => {
  const { items } = await bulkIps("/bulk/81.2.69.142,,9.9.9.9?get=ip");
  assert.equal(items.length, 3);
  assert.equal(items[1].ip, "");
  assert.match(items[1].error.message, /^Invalid IP address ""/);
  // "," is one empty item and a trailing comma.
  const { status, items: lone } = await bulkIps("/bulk/%20,");
  assert.equal(status, 200);
  assert.deepEqual(lone, [items[1]]);
});

Deno.test("POST /bulk trims its items the same way", async () => {
  const response = await app.request("/bulk?get=ip", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ips: [" 81.2.69.142", "9.9.9.9\t"] }),
  });
  assert.deepEqual((await response.json()).data.responseArray, [
    { ip: "81.2.69.142" },
    { ip: "9.9.9.9" },
  ]);
});

Deno.test("splitBulkList keeps line breaks, so such an item stays invalid", () => {
  assert.deepEqual(splitBulkList("1.1.1.1\n, 9.9.9.9\r,"), ["1.1.1.1\n", "9.9.9.9\r"]);
  assert.deepEqual(splitBulkList(""), []);
});

Deno.test("the CORS preflight advertises only the methods each path serves", async () => {
  const preflight = async (path: string) => {
    const response = await app.request(path, {
      method: "OPTIONS",
      headers: { origin: "https://example.org", "access-control-request-method": "GET" },
    });
    assert.equal(response.status, 204, path);
    return response.headers.get("access-control-allow-methods");
  };
  assert.equal(await preflight("/ip/81.2.69.142"), "GET,HEAD,POST");
  assert.equal(await preflight("/bulk"), "POST");
  assert.equal(await preflight("/bulk/1.1.1.1"), "GET,HEAD");
  assert.equal(await preflight("/me"), "GET,HEAD");
  assert.equal(await preflight("/health"), "GET,HEAD");
});

Deno.test("a method the path does not serve is a 405 whose Allow lists the route's methods", async () => {
  const cases: [string, string, string][] = [
    ["POST", "/me", "GET, HEAD, OPTIONS"],
    ["GET", "/bulk", "POST, OPTIONS"],
    ["POST", "/health", "GET, HEAD, OPTIONS"],
    // Methods no route serves are judged by the path's route too.
    ["PUT", "/ip/1.1.1.1", "GET, HEAD, POST, OPTIONS"],
    ["DELETE", "/me", "GET, HEAD, OPTIONS"],
    ["PATCH", "/status", "GET, HEAD, OPTIONS"],
  ];
  for (const [method, path, allow] of cases) {
    const response = await app.request(`${path}?format=xml`, { method });
    assert.equal(response.status, 405, `${method} ${path}`);
    assert.equal(response.headers.get("allow"), allow, `${method} ${path}`);
    assert.match(await response.text(), /^<\?xml.*is not allowed/s, `${method} ${path}`);
  }
  // No route at all: 404 whatever the method.
  const unknown = await app.request("/nonexistent", { method: "DELETE" });
  assert.equal(unknown.status, 404);
  assert.equal(
    (await unknown.json()).message,
    'No route for DELETE "/nonexistent": see /openapi.json',
  );
});

Deno.test("query parameters read as URLSearchParams reads them, decoded or not", async () => {
  const queries = [
    "format=xml&get=city",
    "get=city&get=country",
    "format",
    "=xml&format=csv",
    "&&format=xml&",
    "format=x%6Dl",
    "%66ormat=xml",
    "get=city+country",
    "get=%ZZ&format=xml",
    "get=a=b",
  ];
  for (const query of queries) {
    const expected = new URLSearchParams(query).get("format");
    const response = await app.request(`/ip/81.2.69.142?${query}`);
    const xml = expected?.trim().toLowerCase() === "xml";
    const body = await response.text();
    assert.equal(body.startsWith("<?xml"), xml, query);
  }
});

Deno.test("a request target over 32 KiB is a 414 naming the limit; POST /bulk is the way", async () => {
  const response = await app.request(`/ip/${"1".repeat(40_000)}`);
  assert.equal(response.status, 414);
  const body = await response.json();
  assert.equal(body.success, false);
  assert.match(body.message, /^Request target of 40004 bytes is longer than the limit of 32768/);
});
