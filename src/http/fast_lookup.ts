/**
 * The API's most common request, `GET /ip/{ip}` with no query, body or
 * encoded characters, answered without the framework: Hono's routing and
 * context cost about a fifth of the server's throughput on this request.
 * It produces exactly what the app produces (a test holds the two against each
 * other); everything else, and every error, goes to the app.
 */

import type { Config } from "../config.ts";
import { CONTENT_TYPES } from "../format/render.ts";
import { resultEnvelopeJson } from "../format/result_json.ts";
import type { ServiceSlot } from "./app.ts";
import { isValidHost } from "./request_target.ts";

type Env = { remoteAddr?: Deno.NetAddr };
export type FetchHandler = (request: Request, env: Env) => Response | Promise<Response>;

/** Wraps the app's handler with the fast path; returns it unchanged for CORS origin lists. */
export function withFastLookup(
  services: ServiceSlot,
  config: Pick<Config, "corsOrigins">,
  app: FetchHandler,
): FetchHandler {
  // With an origin list the CORS headers depend on the request: leave it to the app.
  if (!config.corsOrigins.includes("*")) return app;
  const headers = { "content-type": CONTENT_TYPES.json, "access-control-allow-origin": "*" };
  return (request, env) => {
    const current = services.current;
    // A forged Host can move the path inside request.url: only a valid one is taken here.
    const ip = current && request.method === "GET" && isValidHost(request.headers.get("host"))
      ? plainIpPath(request.url)
      : null;
    if (ip === null || request.headers.has("content-type")) return app(request, env);
    let body: string;
    try {
      const result = current!.lookup(ip, { userAgent: request.headers.get("user-agent") });
      body = resultEnvelopeJson(result);
    } catch {
      return app(request, env); // the app looks it up again and renders the error
    }
    return new Response(body, { headers });
  };
}

/** The `{ip}` of `http://host/ip/{ip}`, when the URL has nothing else (no query, no `%`, no `/`). */
function plainIpPath(url: string): string | null {
  const path = url.indexOf("/", url.indexOf("//") + 2);
  if (path === -1 || !url.startsWith("/ip/", path)) return null;
  const ip = url.slice(path + 4);
  if (ip === "" || /[?%/#]/.test(ip)) return null;
  return ip;
}
