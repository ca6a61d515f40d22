/** `createApp(deps)`: the Hono application, assembled in one place. */

import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import type { Config } from "../config.ts";
import { AppError, BadRequestError, DataUnavailableError } from "../errors.ts";
import { applySelection, type OutputFormat, renderError, renderSuccess } from "../format/mod.ts";
import { CONTENT_TYPES, type Rendered } from "../format/render.ts";
import { resultEnvelopeJson } from "../format/result_json.ts";
import type { Lookup } from "../lookup/lookup.ts";
import type { DataSet } from "../sources/data_set.ts";
import type { FailedItem, Json, LookupResult } from "../types.ts";
import { isJsonObject, readJsonBody } from "./body.ts";
import { createClientAddressResolver } from "./client_address.ts";
import {
  type LookupRequest,
  readLookupQuery,
  requestBody,
  requestFormat,
  userAgentFromBody,
  withLookupRequest,
} from "./lookup_request.ts";
import { OPENAPI_DOCUMENT } from "./openapi.ts";
import { STATUS_BY_CODE } from "./status.ts";
import { registerStatusRoute } from "./status_route.ts";

/** The loaded data and lookup; `current` is null while the data is still loading. */
export interface ServiceSlot {
  current: { lookup: Lookup; data: DataSet } | null;
}

export interface AppDeps {
  services: ServiceSlot;
  config: Pick<Config, "bulkMax" | "trustedProxies" | "corsOrigins">;
  /** Where 5xx details go; the client only sees a generic message. */
  logError?: (error: unknown) => void;
}

/** Deno.serve and the node:http server both pass the TCP peer as Hono's `env`. */
type Env = { Bindings: { remoteAddr?: Deno.NetAddr } };

/** Builds the app; bad configuration (e.g. a trusted-proxy CIDR) throws here, at start-up. */
export function createApp(deps: AppDeps): Hono<Env> {
  const { services, config } = deps;
  const logError = deps.logError ?? ((error) => console.error(error));
  const clientAddress = createClientAddressResolver(config.trustedProxies);
  const postBulkLimit = 1024 + config.bulkMax * 64;
  const healthBodies = new WeakMap<DataSet, string>();
  const openApiBody = JSON.stringify(OPENAPI_DOCUMENT);
  const app = new Hono<Env>();

  const anyOrigin = config.corsOrigins.includes("*");
  // Hono's cors() builds a Response and Headers per request, about 40% of
  // throughput. With any origin allowed, the header is constant: it goes into
  // the precomputed response headers, and cors() only answers preflights.
  if (anyOrigin) app.options("*", cors({ origin: "*" }));
  else app.use("*", cors({ origin: [...config.corsOrigins] }));
  const headers = (contentType: string): Record<string, string> =>
    anyOrigin
      ? { "content-type": contentType, "access-control-allow-origin": "*" }
      : { "content-type": contentType };
  const headersByType = new Map(
    Object.values(CONTENT_TYPES).map((type) => [type, headers(type)]),
  );
  const jsonHeaders = headers(CONTENT_TYPES.json);
  const send = (c: Context, status: number, rendered: Rendered) =>
    c.body(rendered.body, status as 200, headersByType.get(rendered.contentType)!);

  app.get("/health", (c) => {
    const data = services.current?.data;
    if (!data) return c.body(LOADING_BODY, 503, jsonHeaders);
    let body = healthBodies.get(data);
    if (!body) {
      healthBodies.set(data, body = JSON.stringify({ success: true, data: healthData(data) }));
    }
    return c.body(body, 200, jsonHeaders);
  });
  app.get("/openapi.json", (c) => c.body(openApiBody, 200, jsonHeaders));
  registerStatusRoute(app, services, jsonHeaders);

  app.get(
    "/ip/:ip{.+}",
    (c) => withLookupRequest(c, (request) => one(c, request, c.req.param("ip"))),
  );
  for (const path of ["/ip", "/ip/"]) {
    app.get(path, (c) => fail(c, new BadRequestError("Missing IP address: use /ip/{ip}")));
  }

  app.get("/me", (c) =>
    withLookupRequest(c, (request) => {
      const peer = c.env?.remoteAddr?.hostname;
      if (!peer) throw new Error("The server did not provide the peer address");
      return one(c, request, clientAddress(peer, c.req.raw.headers));
    }));

  app.get(
    "/bulk/:list{.+}",
    (c) => withLookupRequest(c, (request) => many(c, request, c.req.param("list").split(","))),
  );
  for (const path of ["/bulk", "/bulk/"]) {
    app.get(path, (c) => fail(c, new BadRequestError("Empty bulk list: use /bulk/{ip},{ip},...")));
  }

  app.post("/bulk", async (c) => {
    const request = readLookupQuery(c);
    const body = await readJsonBody(requestBody(c), postBulkLimit);
    if (
      !isJsonObject(body) || !Array.isArray(body.ips) ||
      body.ips.some((ip) => typeof ip !== "string")
    ) {
      throw new BadRequestError('Invalid JSON body: expected {"ips": ["<ip>", ...]}');
    }
    const userAgent = userAgentFromBody(body) ?? request.userAgent;
    return many(c, { ...request, userAgent }, body.ips as string[]);
  });

  app.notFound((c) => {
    const message = `No route for ${c.req.method} ${
      new URL(c.req.url).pathname
    }: see /openapi.json`;
    return send(c, 404, renderError(message, requestFormat(c)));
  });

  app.onError((error, c) => fail(c, error));

  function lookup(ip: string, request: LookupRequest): LookupResult {
    if (!services.current) throw new DataUnavailableError(LOADING_MESSAGE);
    return services.current.lookup(ip, request);
  }

  function one(c: Context, request: LookupRequest, ip: string) {
    const result = lookup(ip, request);
    if (request.format === "json" && request.selection === null) {
      // The common case, with its own serialiser (see result_json.ts).
      return c.body(resultEnvelopeJson(result), 200, jsonHeaders);
    }
    return send(c, 200, renderSuccess(applySelection(result, request.selection), request.format));
  }

  function many(c: Context, request: LookupRequest, ips: string[]) {
    if (ips.length === 0 || (ips.length === 1 && ips[0] === "")) {
      throw new BadRequestError("Empty bulk list: give at least one IP address");
    }
    if (ips.length > config.bulkMax) {
      throw new BadRequestError(
        `Too many addresses in bulk request: ${ips.length} given, at most ${config.bulkMax}`,
      );
    }
    // One data set for the whole list, even if a reload swaps it meanwhile.
    const current = services.current;
    if (!current) throw new DataUnavailableError(LOADING_MESSAGE);
    const responseArray: Json[] = ips.map((ip) =>
      applySelection(lookupItem(ip, request, current.lookup), request.selection)
    );
    return send(c, 200, renderSuccess({ responseArray }, request.format));
  }

  /** One bulk item: a result, or the failure in place; other errors fail the whole call. */
  function lookupItem(
    ip: string,
    request: LookupRequest,
    lookup: Lookup,
  ): LookupResult | FailedItem {
    try {
      return lookup(ip, request);
    } catch (error) {
      if (
        error instanceof AppError && (error.code === "invalid_ip" || error.code === "not_found")
      ) {
        return { ip, error: { status: STATUS_BY_CODE[error.code], message: error.message } };
      }
      throw error;
    }
  }

  function fail(c: Context, error: unknown) {
    const format: OutputFormat = requestFormat(c);
    if (error instanceof AppError) {
      return send(c, STATUS_BY_CODE[error.code], renderError(error.message, format));
    }
    logError(error);
    return send(c, 500, renderError("Internal server error", format));
  }

  return app;
}

const LOADING_MESSAGE = "Data is not loaded yet: try again shortly";
const LOADING_BODY = JSON.stringify({ success: false, message: LOADING_MESSAGE });

function healthData(data: DataSet): Json {
  return {
    status: "ok",
    databases: data.manifest.sources.map((s) => ({
      kind: s.kind,
      databaseType: s.databaseType,
      source: s.source,
      built: s.built,
      license: s.license,
      attribution: s.attribution,
    })),
  };
}
