/**
 * The lookup's floor in a Hono app (`hono-lookup` in bench/http_bench.ts): one
 * Hono route that answers `GET /ip/{ip}` with ipintel's own lookup and JSON
 * writer over the same data (the same answer body `plain` sends, user agent
 * included), with the content type and CORS header, and nothing else: no
 * answer rules, no instrumentation, no admission, no Host check. The gap
 * between `hono` and it is what the lookup and its answer cost; the gap
 * between it and `plain` is what ipintel's request pipeline costs. It is what
 * any Hono app doing this lookup pays at the least.
 *
 * Run: deno run -A bench/lookup_floor_server.ts --port 8002 [--host 127.0.0.1]
 *
 * @module
 */

import { Hono } from "hono";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { loadConfig } from "../src/base/config.ts";
import { resultEnvelopeJson } from "../src/core/format/result_json.ts";
import { openServed } from "../src/process/server/served.ts";

// The content type alone in the Response's init, CORS set on the made answer, as ipintel does:
// Deno builds a Response whose init holds only a content type on a fast path, and any other
// header in the init takes the slow one (bench/README.md).
const HEADERS = { "content-type": "application/json; charset=utf-8" };

function argValue(flag: string): string | undefined {
  const i = Deno.args.indexOf(flag);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

if (import.meta.main) {
  const config = loadConfig({ ...Deno.env.toObject(), IPINTEL_AUTH: "off" });
  const { lookup } = await openServed(config);
  const app = new Hono({ router: new RegExpRouter() });
  app.get("/ip/:ip{.+}", (c) => {
    const result = lookup.find(c.req.param("ip"), { userAgent: c.req.header("user-agent") });
    const response = c.body(resultEnvelopeJson(result), 200, HEADERS);
    response.headers.set("access-control-allow-origin", "*");
    return response;
  });
  app.get("/ready", (c) => c.body(null, 200)); // what the bench waits for before measuring
  Deno.serve({
    port: Number(argValue("--port") ?? 8002),
    hostname: argValue("--host") ?? "127.0.0.1",
    onListen: ({ hostname, port }) =>
      console.error(`lookup floor listening on http://${hostname}:${port}`),
  }, app.fetch);
}
