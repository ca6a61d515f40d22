/**
 * The API's most common requests, `GET /ip/{ip}` with no body or encoded
 * characters and no query but plain `format`, `get` and `lang` parameters
 * (see PLAIN_PARAMS), answered without the framework: Hono's routing and
 * context cost about a fifth of the server's throughput on the plain request.
 * It produces exactly what the app produces (a test holds the two against each
 * other); everything else, and every error, goes to the app.
 */

import type { AccessControl, Caller } from "../access/access.ts";
import type { Config } from "../config.ts";
import { CONTENT_TYPES, type OutputFormat, renderSuccess } from "../format/render.ts";
import { applySelection, parseFieldSelection } from "../format/select.ts";
import { resultEnvelopeJson } from "../format/result_json.ts";
import { apiKeyOf, rateLimitHeaders } from "./access.ts";
import type { ServiceSlot } from "./service_slot.ts";
import { createClientAddressResolver } from "./client_address.ts";
import { isValidHost } from "./request_target.ts";

type Env = { remoteAddr?: Deno.NetAddr };
export type FetchHandler = (request: Request, env: Env) => Response | Promise<Response>;

/**
 * Wraps the app's handler with the fast path; returns it unchanged for CORS
 * origin lists. With `access`, the key and the limit are checked exactly as
 * the app checks them; whatever is not a plain success (a missing or wrong
 * key, a limit that needs the shared count or refuses) goes to the app, and
 * nothing is charged before the app takes over.
 */
export function withFastLookup(
  services: ServiceSlot,
  config: Pick<Config, "corsOrigins" | "trustedProxies" | "forwardedHeader">,
  app: FetchHandler,
  access?: AccessControl,
): FetchHandler {
  // With an origin list the CORS headers depend on the request: leave it to the app.
  if (!config.corsOrigins.includes("*")) return app;
  const headersOf = (format: OutputFormat) => ({
    "content-type": CONTENT_TYPES[format],
    "access-control-allow-origin": "*",
  });
  const headersByFormat = {
    json: headersOf("json"),
    xml: headersOf("xml"),
    csv: headersOf("csv"),
  } as const;
  const clientAddress = createClientAddressResolver(config);
  return (request, env) => {
    const current = services.current;
    // A forged Host can move the path inside request.url: only a valid one is taken here.
    const target = current && request.method === "GET" &&
        isValidHost(request.headers.get("host"))
      ? plainIpTarget(request.url)
      : null;
    if (target === null || request.headers.has("content-type")) return app(request, env);
    const { ip, format, get, lang } = target;
    const headers = headersByFormat[format];
    let caller: Caller | null = null;
    let body: string;
    try {
      if (access) {
        // The peer is read only for keyless callers: reading it costs a call into the runtime.
        caller = access.identify(apiKeyOf(undefined, request.headers), () => {
          const peer = env?.remoteAddr?.hostname;
          if (!peer) throw new Error("no peer address"); // the app answers
          return clientAddress(peer, request.headers);
        });
      }
      // An unknown name throws here, before anything is charged: the app answers 400.
      const selection = get === null ? null : parseFieldSelection(get);
      const result = current!.lookup(ip, {
        userAgent: request.headers.get("user-agent"),
        lang,
        selection,
      });
      // As the app's `one` renders it.
      body = format === "json" && selection === null
        ? resultEnvelopeJson(result)
        : renderSuccess(applySelection(result, selection), format).body;
    } catch {
      return app(request, env); // the app checks and looks up again, and renders the error
    }
    const charge = access ? access.tryCharge(caller, 1) : null;
    if (charge === null || charge.kind === "unlimited") return new Response(body, { headers });
    if (charge.kind !== "allowed") return app(request, env);
    return new Response(body, { headers: { ...headers, ...rateLimitHeaders(charge) } });
  };
}

/**
 * The parameters taken here, each at most once, with the values taken: a
 * format in lower case, `get` with names and dotted paths only, `lang` as a
 * plain tag (an unsupported one throws in the lookup: the app answers 400).
 * Nothing a percent-decoder or `+` would change gets past these patterns.
 */
const PLAIN_PARAMS: ReadonlyMap<string, RegExp> = new Map([
  ["format", /^(?:json|xml|csv)$/],
  ["get", /^[A-Za-z0-9_.,]+$/],
  ["lang", /^[A-Za-z0-9_-]{1,35}$/],
]);

interface PlainTarget {
  ip: string;
  format: OutputFormat;
  get: string | null;
  lang: string | null;
}

/**
 * The `{ip}` of `http://host/ip/{ip}` and its query, when the URL has nothing
 * else (no `%`, no `/`, no `#`) and the query holds only PLAIN_PARAMS, each
 * once. Anything else (another parameter, a repeated one, a value spelled
 * otherwise, an encoded character, an empty `?` or `&`) is the app's.
 */
function plainIpTarget(url: string): PlainTarget | null {
  const path = url.indexOf("/", url.indexOf("//") + 2);
  if (path === -1 || !url.startsWith("/ip/", path)) return null;
  const query = url.indexOf("?", path);
  const ip = query === -1 ? url.slice(path + 4) : url.slice(path + 4, query);
  if (ip === "" || /[?%/#]/.test(ip)) return null;
  const target: PlainTarget = { ip, format: "json", get: null, lang: null };
  if (query === -1) return target;
  const seen = new Set<string>();
  for (const pair of url.slice(query + 1).split("&")) {
    const equals = pair.indexOf("=");
    const name = pair.slice(0, equals);
    const value = pair.slice(equals + 1);
    const pattern = equals > 0 ? PLAIN_PARAMS.get(name) : undefined;
    if (pattern === undefined || seen.has(name) || !pattern.test(value)) return null;
    seen.add(name);
    if (name === "format") target.format = value as OutputFormat;
    else if (name === "get") target.get = value;
    else target.lang = value;
  }
  return target;
}
