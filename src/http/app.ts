/** `createApp(deps)`: one handler per route of the table, run by the pipeline. */

import type { AccessControl, Caller } from "../access/access.ts";
import type { Config } from "../config.ts";
import { lookupItem } from "../bulk/stream.ts";
import { AppError, BadRequestError, DataUnavailableError } from "../errors.ts";
import { streamFormat } from "../format/stream.ts";
import { renderError, renderLookup } from "../format/mod.ts";
import { bearerMatches } from "../ops/bearer.ts";
import { METRICS_CONTENT_TYPE } from "../ops/metrics.ts";
import type { DataSet } from "../sources/data_set.ts";
import { redactUrl } from "../sources/redact_url.ts";
import type { Json } from "../types.ts";
import { acceptsHtml, createSite } from "../web/site.ts";
import { createAdmission } from "./admission.ts";
import { type CompatDeps, compatHandler } from "./compat_handler.ts";
import {
  bodyFormat,
  type BulkStreamDeps,
  streamBodyAnswer,
  streamListAnswer,
} from "./bulk_stream.ts";
import { createClientAddressResolver } from "./client_address.ts";
import {
  type LookupRequest,
  readLookupQuery,
  readLookupRequest,
  splitBulkList,
} from "./lookup_request.ts";
import { OPENAPI_DOCUMENT } from "./openapi.ts";
import {
  type Answer,
  type ApiRequest,
  createPipeline,
  type FetchHandler,
  FORMAT_HEADERS,
  type Handler,
  type ServeEnv,
} from "./pipeline.ts";
import type { RoutePath } from "./routes.ts";
import type { ServiceSlot } from "./service_slot.ts";
import { statusRoute } from "./status_route.ts";

export type { ServiceSlot };

export interface AppDeps {
  services: ServiceSlot;
  config:
    & Pick<Config, "bulkMax" | "trustedProxies" | "forwardedHeader" | "corsOrigins">
    & Partial<Pick<Config, "web">>;
  /** Keys and rate limits; without it the API is open (as with IPINTEL_AUTH=off). */
  access?: AccessControl;
  /** Where 5xx details go (with the request, for its id); the client only sees a generic message. */
  logError?: (error: unknown, request?: Request) => void;
  /** Readiness beyond the data being loaded (the KV answering...): null when ready, else why not. */
  ready?: () => Promise<string | null>;
  /** Serves `GET /metrics` (absent: no such route); with a token, only to `Bearer <token>`. */
  metrics?: { render: () => string; token: string | null };
}

export interface App {
  /** The handler both servers run (Deno.serve's and node_server's signature). */
  fetch: FetchHandler;
  /** An in-process request to a path (`/ip/8.8.8.8`) or URL, as a server would pass it. */
  request(input: string | Request, init?: RequestInit, env?: ServeEnv): Promise<Response>;
}

/** Builds the app; bad configuration (e.g. a trusted-proxy CIDR) throws here, at start-up. */
export function createApp(deps: AppDeps): App {
  const { services, config } = deps;
  const resolveClient = createClientAddressResolver(config);
  const client = (request: ApiRequest) => resolveClient(request.peer(), request.headers);
  const admission = createAdmission(deps.access, client);
  const logError = deps.logError ?? ((error: unknown) => console.error(error));
  const readyBodies = new WeakMap<DataSet, string>();
  const openApiBody = JSON.stringify(OPENAPI_DOCUMENT);
  const site = config.web === false ? null : createSite({ bulkMax: config.bulkMax });

  const current = () => {
    if (!services.current) throw new DataUnavailableError(LOADING_MESSAGE);
    return services.current;
  };

  /**
   * A lookup route: who calls (401), the addresses (null: the caller's own),
   * the parameters (400), then the charge and the answer.
   */
  const lookupRoute = (request: ApiRequest, ips: string | string[] | null) => {
    const caller = admission.identify(request);
    const addresses = ips ?? client(request);
    const parameters = readLookupRequest(request);
    return parameters instanceof Promise
      ? parameters.then((p) => charged(request, caller, p, addresses))
      : charged(request, caller, parameters, addresses);
  };

  /** Charges one unit per address (a bulk list all or nothing; 429), then answers. */
  const charged = (
    request: ApiRequest,
    caller: Caller | null,
    p: LookupRequest,
    addresses: string | string[],
  ): Answer | Promise<Answer> => {
    if (typeof addresses !== "string") {
      if (addresses.length === 0) {
        throw new BadRequestError("Empty bulk list: give at least one IP address");
      }
    }
    const cost = typeof addresses === "string" ? 1 : addresses.length;
    const waiting = admission.charge(request, caller, cost);
    return waiting ? waiting.then(() => answer(p, addresses)) : answer(p, addresses);
  };

  const answer = (p: LookupRequest, addresses: string | string[]): Answer => {
    // One data set for a whole list, even if a reload swaps it meanwhile.
    const lookup = current().lookup;
    const data = typeof addresses === "string"
      ? lookup(addresses, p)
      : addresses.map((ip) => lookupItem(ip, p, lookup));
    return {
      status: 200,
      headers: FORMAT_HEADERS[p.format],
      body: renderLookup(data, p.selection, p.format),
    };
  };

  const me: Handler = (request) => lookupRoute(request, null);

  /** What a streamed bulk answer uses: one data set, the caller's budget through admission. */
  const streamDeps = (request: ApiRequest, caller: Caller | null): BulkStreamDeps => ({
    lookup: current().lookup,
    charge: (units) => admission.charge(request, caller, units),
    rate: () => request.rate,
    logError: (error) => logError(error, request.raw),
  });
  const compat: CompatDeps = {
    admission,
    client,
    served: current,
    bulkMax: config.bulkMax,
    logError,
  };

  const handlers: { [P in RoutePath]: Handler } = {
    "/ip/{ip}": (request) => {
      if (request.param === "") throw new BadRequestError("Missing IP address: use /ip/{ip}");
      return lookupRoute(request, request.param);
    },
    "/me": me,
    // Up to IPINTEL_BULK_MAX addresses answered whole; a longer list, or NDJSON, streamed.
    "/bulk/{ip_list}": (request) => {
      if (request.param === "") {
        throw new BadRequestError("Empty bulk list: use /bulk/{ip},{ip},... or POST /bulk");
      }
      const ips = splitBulkList(request.param);
      const format = streamFormat(request.query("format"), request.headers.get("accept"));
      if (format !== "ndjson" && ips.length <= config.bulkMax) return lookupRoute(request, ips);
      const caller = admission.identify(request);
      const p = readLookupQuery(request);
      return streamListAnswer(ips, { ...p, format }, streamDeps(request, caller));
    },
    // A body of any length, read as the answer is written (src/http/bulk_stream.ts).
    "/bulk": (request) => {
      const caller = admission.identify(request);
      const p = readLookupQuery(request);
      const format = streamFormat(request.query("format"), request.headers.get("accept"));
      const deps = streamDeps(request, caller);
      return streamBodyAnswer(request.body, bodyFormat(request.headers), { ...p, format }, deps);
    },
    // The lookup page for a browser, /me for everyone else (as ifconfig.co does).
    "/": (request) => {
      const answer = site && acceptsHtml(request.headers.get("accept"))
        ? site.page(request)
        : me(request);
      const vary = (a: Answer): Answer => ({ ...a, headers: { vary: "Accept", ...a.headers } });
      return answer instanceof Promise ? answer.then(vary) : vary(answer);
    },
    "/assets/{name}": (request) => {
      const asset = site?.asset(request.param, request);
      if (!asset) throw new AppError("not_found", "No such asset: see / for the page");
      return asset;
    },
    // Liveness: the process answers. Readiness: the data is loaded and every check passes.
    "/health": () => HEALTH,
    "/ready": async () => {
      const data = services.current?.data;
      const reason = data
        ? data.incomplete ?? await deps.ready?.() ?? null
        : "data is not loaded yet";
      if (!data || reason !== null) {
        const body = JSON.stringify({ success: false, message: `Not ready: ${reason}` });
        return { status: 503, headers: NO_STORE_JSON, body };
      }
      let body = readyBodies.get(data);
      if (!body) {
        readyBodies.set(data, body = JSON.stringify({ success: true, data: readyData(data) }));
      }
      return { status: 200, headers: NO_STORE_JSON, body };
    },
    "/status": statusRoute(services),
    "/metrics": (request) => {
      const metrics = deps.metrics;
      if (!metrics) throw new AppError("not_found", "No metrics: IPINTEL_METRICS is off");
      if (
        metrics.token !== null &&
        !bearerMatches(request.headers.get("authorization"), metrics.token)
      ) {
        return {
          status: 401,
          headers: { ...FORMAT_HEADERS.json, "www-authenticate": 'Bearer realm="metrics"' },
          body: renderError(METRICS_UNAUTHORIZED, "json").body,
        };
      }
      return { status: 200, headers: METRICS_HEADERS, body: metrics.render() };
    },
    "/openapi.json": () => ({ status: 200, headers: FORMAT_HEADERS.json, body: openApiBody }),
    // The compatible APIs: their paths, keys and shapes over this pipeline's admission and data.
    "/geoip/v2.1/country/{ip}": compatHandler("/geoip/v2.1/country/{ip}", compat),
    "/geoip/v2.1/city/{ip}": compatHandler("/geoip/v2.1/city/{ip}", compat),
    "/geoip/v2.1/insights/{ip}": compatHandler("/geoip/v2.1/insights/{ip}", compat),
    "/ipinfo/{path}": compatHandler("/ipinfo/{path}", compat),
    "/json/{ip}": compatHandler("/json/{ip}", compat),
    "/batch": compatHandler("/batch", compat),
  };

  const fetch = createPipeline({
    handlers,
    corsOrigins: config.corsOrigins,
    logError,
  });
  return {
    fetch,
    request: async (input, init, env) => {
      const url = typeof input !== "string" || /^https?:\/\//.test(input)
        ? input
        : `http://localhost${input}`;
      return await fetch(url instanceof Request ? url : new Request(url, init), env);
    },
  };
}

const LOADING_MESSAGE = "Data is not loaded yet: try again shortly";

const HEALTH: Answer = Object.freeze({
  status: 200,
  headers: FORMAT_HEADERS.json,
  body: JSON.stringify({ success: true, data: { status: "ok" } }),
});
const NO_STORE_JSON = Object.freeze({ ...FORMAT_HEADERS.json, "cache-control": "no-store" });
const METRICS_HEADERS = Object.freeze({
  "content-type": METRICS_CONTENT_TYPE,
  "cache-control": "no-store",
});
const METRICS_UNAUTHORIZED =
  "Invalid or missing metrics token: send Authorization: Bearer <IPINTEL_METRICS_TOKEN>";

function readyData(data: DataSet): Json {
  return {
    status: "ready",
    databases: data.manifest.sources.map((s) => ({
      kind: s.kind,
      databaseType: s.databaseType,
      source: redactUrl(s.source),
      built: s.built,
      license: s.license,
      attribution: s.attribution,
    })),
  };
}
