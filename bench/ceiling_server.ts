/**
 * The HTTP ceiling: a bare `Deno.serve` answering every request with the same
 * ~600-byte JSON body. Whatever ipintel does per request, it cannot beat this
 * on the same machine; bench/http_bench.ts reports ipintel as a ratio of it.
 *
 * Run: deno run --allow-net bench/ceiling_server.ts [--port 8001] [--host 127.0.0.1] [--floor | --hono]
 *
 * @module
 */

import { Hono } from "hono";
import { RegExpRouter } from "hono/router/reg-exp-router";

/**
 * A lookup-shaped body of about 600 bytes, built once. ASCII only: a string
 * with any non-ASCII character is stored as UTF-16 and transcoded on every
 * response, which costs a bare server about 12% of its throughput; the
 * ceiling is the fast case.
 */
export const CEILING_BODY: string = JSON.stringify({
  success: true,
  data: {
    ip: "203.0.113.42",
    geoLocation: {
      continent: "Europe",
      continentCode: "EU",
      country: "Germany",
      countryCode: "DE",
      capital: "Berlin",
      region: "Hesse",
      regionCode: "HE",
      city: "Frankfurt am Main",
      postal_Code: "60313",
      dial_code: "+49",
      is_in_eu: true,
      latitude: 50.1155,
      longitude: 8.6842,
      accuracy_radius: 20,
    },
    timezone: {
      time_zone: "Europe/Berlin",
      abbr: "CET",
      offset: 3600,
      is_dst: false,
      utc: "+01:00",
      current_time: "2026-11-22T01:23:45+01:00",
    },
    currency: { code: "EUR", symbol: "EUR", name: "Euro" },
    connection: { asn_number: 3320, asn_org: "Deutsche Telekom AG" },
    security: { isVpn: false, isTor: false, isThreat: "low" },
  },
});

const HEADERS = { "content-type": "application/json; charset=utf-8" };
const CORS_HEADERS = Object.freeze({ ...HEADERS, "access-control-allow-origin": "*" });

/**
 * The floor (`--floor`): the same body, but first what any handler of the
 * spec must do before it can answer, and nothing else. It reads the request
 * target and the headers (the User-Agent feeds `userAgent`, a key comes in
 * `X-API-Key`), and answers with the headers every ipintel answer carries
 * (content type, CORS) plus the three RateLimit headers when a key was sent
 * (docs: "Every response of a limited route carries..."). The gap between the
 * ceiling and the floor is the runtime's price of those steps; the gap
 * between the floor and ipintel is ipintel's own work.
 */
let served = 0;
function floorHandler(request: Request): Response {
  void request.url;
  void request.headers.get("user-agent");
  if (request.headers.get("x-api-key") === null) {
    return new Response(CEILING_BODY, { headers: CORS_HEADERS });
  }
  served++;
  return new Response(CEILING_BODY, {
    headers: {
      ...CORS_HEADERS,
      "ratelimit-limit": "1000000000",
      "ratelimit-remaining": String(1_000_000_000 - served),
      "ratelimit-reset": "60",
    },
  });
}

/**
 * Hono's own floor (`--hono`): a Hono hello-world answering `GET /ip/{ip}`
 * with the same body, routed by the router ipintel uses and nothing else: the
 * gap between it and the ceiling is what the framework costs per request.
 */
function honoHandler(): (request: Request) => Response | Promise<Response> {
  const app = new Hono({ router: new RegExpRouter() });
  app.get("/ip/:ip{.+}", (c) => c.body(CEILING_BODY, 200, HEADERS));
  app.get("/ready", (c) => c.body(null, 200)); // what the bench waits for before measuring
  return app.fetch;
}

function argValue(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

if (import.meta.main) {
  const port = Number(argValue(Deno.args, "--port") ?? 8001);
  const hostname = argValue(Deno.args, "--host") ?? "127.0.0.1";
  Deno.serve(
    {
      port,
      hostname,
      onListen: ({ hostname, port }) =>
        console.error(`ceiling listening on http://${hostname}:${port}`),
    },
    Deno.args.includes("--floor")
      ? floorHandler
      : Deno.args.includes("--hono")
      ? honoHandler()
      : () => new Response(CEILING_BODY, { headers: HEADERS }),
  );
}
