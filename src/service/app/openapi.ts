/**
 * The OpenAPI 3.1 description of every route. The result schemas are derived
 * from `RESULT_LAYOUT` (src/base/types.ts); tests hold the document against the
 * app's routes and against real responses.
 */

import { ASN_OPENAPI_SCHEMAS, asnPathItem } from "../../core/asn/openapi.ts";
import { COMPAT_SECURITY_SCHEMES } from "../compat/openapi.ts";
import denoJson from "../../../deno.json" with { type: "json" };
import {
  isLayoutLeaf,
  type LayoutGroup,
  type LayoutLeaf,
  type LayoutNode,
  RESULT_LAYOUT,
  RISK_LAYOUT,
} from "../../base/types.ts";
import { UA_BODY_LIMIT } from "../http/lookup_request.ts";
import type { Route } from "../http/route.ts";

type Schema = Record<string, unknown>;

/** Schema names of the result's groups, in layout order. */
const GROUP_SCHEMAS: Record<keyof typeof RESULT_LAYOUT, string | null> = {
  ip: null,
  geoLocation: "GeoLocation",
  timezone: "TimeZone",
  flag: "Flag",
  currency: "Currency",
  connection: "Connection",
  userAgent: "UserAgent",
  security: "Security",
};

function leafSchema(leaf: LayoutLeaf): Schema {
  const schema: Schema = { type: leaf.nullable ? [leaf.leaf, "null"] : leaf.leaf };
  if (leaf.items) schema.items = groupSchema(leaf.items);
  if (leaf.fields) Object.assign(schema, groupSchema(leaf.fields), { type: schema.type });
  if (leaf.enum) schema.enum = leaf.nullable ? [...leaf.enum, null] : [...leaf.enum];
  if (leaf.description) schema.description = leaf.description;
  return schema;
}

/** A group: every key required (unknown values are null, never absent), no others. */
function groupSchema(group: LayoutGroup, ref: (key: string) => string | null = () => null): Schema {
  const properties: Record<string, Schema> = {};
  for (const [key, node] of Object.entries(group)) {
    const name = ref(key);
    properties[key] = name
      ? { $ref: `#/components/schemas/${name}` }
      : isLayoutLeaf(node)
      ? leafSchema(node)
      : groupSchema(node);
  }
  return {
    type: "object",
    properties,
    required: Object.keys(group),
    additionalProperties: false,
  };
}

function resultSchemas(): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [key, name] of Object.entries(GROUP_SCHEMAS)) {
    const node: LayoutNode = RESULT_LAYOUT[key as keyof typeof RESULT_LAYOUT];
    if (name && !isLayoutLeaf(node)) out[name] = groupSchema(node);
  }
  out.LookupResult = {
    description: "The full result (no `get`): every key always present, unknown values null.",
    ...groupSchema(RESULT_LAYOUT, (key) => GROUP_SCHEMAS[key as keyof typeof RESULT_LAYOUT]),
  };
  return out;
}

const schemas = {
  ...resultSchemas(),
  ...ASN_OPENAPI_SCHEMAS,
  Risk: {
    description:
      "Opt-in (`get=risk`, `get=security,risk`, or a field such as `matches`): why `security` says what it says.",
    ...groupSchema(RISK_LAYOUT),
  },
  Selection: {
    type: "object",
    description:
      "The result with `get`: `ip`, plus each chosen group (nested), bare name (flat under `data`) or dotted path (kept inside its parents). The opt-in `risk` group and `network` come only this way.",
    properties: {
      ip: { type: "string" },
      risk: { $ref: "#/components/schemas/Risk" },
      network: { $ref: "#/components/schemas/MatchedNetworks" },
    },
    required: ["ip"],
  },
  FailedItem: {
    type: "object",
    properties: {
      ip: { type: "string", description: "The item as given, capped in length" },
      error: {
        type: "object",
        properties: { status: { type: "integer" }, message: { type: "string" } },
        required: ["status", "message"],
        additionalProperties: false,
      },
    },
    required: ["ip", "error"],
    additionalProperties: false,
  },
  Envelope: {
    type: "object",
    properties: {
      success: { type: "boolean", const: true },
      data: {
        anyOf: [
          { $ref: "#/components/schemas/LookupResult" },
          { $ref: "#/components/schemas/Selection" },
        ],
      },
    },
    required: ["success", "data"],
    additionalProperties: false,
  },
  BulkEnvelope: {
    type: "object",
    properties: {
      success: { type: "boolean", const: true },
      data: {
        type: "object",
        properties: {
          responseArray: {
            type: "array",
            items: {
              anyOf: [
                { $ref: "#/components/schemas/FailedItem" },
                { $ref: "#/components/schemas/LookupResult" },
                { $ref: "#/components/schemas/Selection" },
              ],
            },
          },
          incomplete: { $ref: "#/components/schemas/Incomplete" },
        },
        required: ["responseArray"],
        additionalProperties: false,
      },
    },
    required: ["success", "data"],
    additionalProperties: false,
  },
  // Streamed bulk (issue 22): the final record of a stream that stopped early.
  Incomplete: {
    type: "object",
    description:
      "Why a streamed answer stopped before its input did (429: the budget ran out); resume from item `answered + 1`",
    properties: {
      status: { type: "integer" },
      message: { type: "string" },
      answered: { type: "integer", description: "Items answered, failed items included" },
      retryAfter: { type: ["integer", "null"], description: "Seconds, for a 429" },
    },
    required: ["status", "message", "answered", "retryAfter"],
    additionalProperties: false,
  },
  Error: {
    type: "object",
    properties: { success: { type: "boolean", const: false }, message: { type: "string" } },
    required: ["success", "message"],
    additionalProperties: false,
  },
};

const queryParameters = [
  {
    name: "get",
    in: "query",
    schema: { type: "string" },
    description:
      "Comma-separated field names, case-insensitive: groups (geoLocation, currency, …, and the opt-in risk and network), bare leaf names (country, city; returned flat) or dotted paths (currency.code; kept nested). `ip` is always included.",
  },
  {
    name: "format",
    in: "query",
    schema: { type: "string", enum: ["json", "xml", "csv"], default: "json" },
    description: "Case-insensitive; unknown values give JSON. Errors come in the same format.",
  },
  {
    name: "lang",
    in: "query",
    schema: { type: "string", default: "en" },
    description:
      "Language of place names: one language tag (BCP 47). A tag the City database does not carry falls back to one with the same primary subtag (de-DE → de, pt → pt-BR); anything else is a 400.",
  },
  {
    name: "ua",
    in: "query",
    schema: { type: "string" },
    description:
      "User-agent string to parse, when no JSON body gives one; default: the User-Agent header.",
  },
  {
    name: "at",
    in: "query",
    schema: { type: "string", format: "date-time" },
    description:
      "An ISO 8601 time with its zone, or a date: `security` and `risk` as the security lists stood then (from the kept list history); `security` then carries `asOf` and `note`; location, time zone and ASN stay current. Before the kept history: 422; malformed or in the future: 400.",
  },
  {
    name: "apiKey",
    in: "query",
    schema: { type: "string" },
    description:
      "API key (wins over the headers). Keys in URLs reach logs: prefer the X-API-Key header.",
  },
];

// Streamed bulk (issue 22): `format=ndjson` (or Accept: application/x-ndjson) on /bulk.
const bulkQueryParameters = queryParameters.map((p) =>
  p.name === "format"
    ? {
      ...p,
      schema: { type: "string", enum: ["json", "xml", "csv", "ndjson"], default: "json" },
      description:
        'Case-insensitive; unknown values give JSON. `ndjson` (also `Accept: application/x-ndjson` without `format`) streams one item a line, and a last line `{"incomplete": {...}}` when the stream stops early. Errors come in JSON or XML.',
    }
    : p
);
const bulkFormats = (schema: string) => ({
  ...formats(schema),
  "application/x-ndjson": {
    schema: { type: "string" },
    description: "One item (FailedItem, LookupResult or Selection) a line; last `{incomplete}`",
  },
});

const errorResponse = (description: string) => ({
  description,
  content: {
    "application/json": { schema: { $ref: "#/components/schemas/Error" } },
    "application/xml": { schema: { type: "string" } },
  },
});

const formats = (schema: string) => ({
  "application/json": { schema: { $ref: `#/components/schemas/${schema}` } },
  "application/xml": { schema: { type: "string" } },
  "text/csv": { schema: { type: "string" } },
});

const userAgentBodySchema = {
  type: "object",
  properties: { userAgent: { type: "string" } },
};

/** Statuses every route can answer, whatever it does. */
const everyRoute = {
  "400": errorResponse("Invalid Host header or request target"),
  "500": errorResponse("Unexpected failure (generic message; details only in the server log)"),
};

/** Statuses of every lookup route (`/ip`, `/me`, `/bulk`). */
const lookupErrors = {
  "400": errorResponse(
    "Unknown `get` names, unsupported `lang`, malformed JSON body, a GET body on a server that drops it, an invalid forwarding header from a trusted proxy, an invalid Host header",
  ),
  "401": errorResponse("API key missing or invalid, where one is required"),
  "422": errorResponse("`at` is before the kept list history (the message says where it starts)"),
  "413": errorResponse(
    `Request body over the limit (${UA_BODY_LIMIT / 1024} KiB for a user agent)`,
  ),
  "429": {
    ...errorResponse("Over the rate limit"),
    headers: { "Retry-After": { schema: { type: "integer" }, description: "Seconds" } },
  },
  "500": everyRoute["500"],
  "503": errorResponse("Data is not loaded yet"),
};

const unsupportedBody = {
  "415": errorResponse("Body sent without Content-Type: application/json"),
};

const rateLimitHeaders = {
  "RateLimit-Limit": { schema: { type: "integer" } },
  "RateLimit-Remaining": { schema: { type: "integer" } },
  "RateLimit-Reset": { schema: { type: "integer" }, description: "Seconds" },
};

const ok = (description: string, schema: string) => ({
  description,
  headers: rateLimitHeaders,
  content: formats(schema),
});

/**
 * A keyed route's `security` (`access: "key"`): any of the three, or none where keys are
 * optional or off (IPINTEL_AUTH). openApiDocument gives it to every operation of such a route.
 */
export const KEY_SECURITY = [{ apiKeyHeader: [] }, { bearer: [] }, { apiKeyQuery: [] }, {}];

/** The OpenAPI operations of `/ip/{ip}`. */
export const IP_DOC = {
  parameters: [{ name: "ip", in: "path", required: true, schema: { type: "string" } }],
  get: {
    summary: "Look up one IPv4 or IPv6 address",
    parameters: queryParameters,
    requestBody: {
      required: false,
      description:
        "Only with `--http-server node` (Deno.serve drops GET bodies: use POST). Content-Type: application/json.",
      content: { "application/json": { schema: userAgentBodySchema } },
    },
    responses: {
      "200": ok("The lookup result", "Envelope"),
      "404": errorResponse("Invalid IP address, or no data for it"),
      ...lookupErrors,
    },
  },
  post: {
    summary: "Look up one address with the user agent in a JSON body",
    description:
      'The way to send a user agent in a body on every server: `{"userAgent": "..."}`. Same answer as the GET.',
    parameters: queryParameters,
    requestBody: {
      required: true,
      content: { "application/json": { schema: userAgentBodySchema } },
    },
    responses: {
      "200": ok("The lookup result", "Envelope"),
      "404": errorResponse("Invalid IP address, or no data for it"),
      ...lookupErrors,
      ...unsupportedBody,
    },
  },
};

/** The OpenAPI operations of `/`. */
export const PAGE_DOC = {
  get: {
    summary: "The lookup page for a browser; the caller's own address for anyone else",
    description:
      "With `text/html` in Accept (and IPINTEL_WEB not false): the lookup page. Otherwise exactly " +
      "what `GET /me` answers, with the same keys, limits and query parameters.",
    parameters: queryParameters,
    responses: {
      "200": {
        description: "The page, or the lookup result of the caller's address",
        content: { "text/html": { schema: { type: "string" } }, ...formats("Envelope") },
      },
      "404": errorResponse("No data for the caller's address"),
      ...lookupErrors,
    },
  },
};

/** The OpenAPI operations of `/assets/{name}`. */
export const ASSETS_DOC = {
  get: {
    summary: "The lookup page's script, style and world map, under content-hashed names",
    parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": { description: "The file (cached for a year; gzip when accepted)" },
      "304": { description: "The If-None-Match ETag is current" },
      "404": errorResponse("No such file, or the page is off (IPINTEL_WEB=false)"),
    },
  },
};

/** The OpenAPI operations of `/me`. */
export const ME_DOC = {
  get: {
    summary: "Look up the caller's own address",
    description:
      "The TCP peer; the configured forwarding header only from configured trusted proxies.",
    parameters: queryParameters,
    responses: {
      "200": ok("The lookup result", "Envelope"),
      "404": errorResponse("No data for the caller's address"),
      ...lookupErrors,
    },
  },
};

/** The OpenAPI operations of `/auth`. */
export const AUTH_DOC = {
  get: {
    summary: "Forward-auth: the caller's address judged by the IPINTEL_POLICY policy",
    description:
      "For a reverse proxy (nginx auth_request, Caddy forward_auth, Traefik forwardAuth): the caller is read as on /me, and its User-Agent for a crawler's claim (the policy's crawler and fake-crawler tags). 204 allows, 403 denies; the headers say why. One rate-limit unit per decision. See docs/forward-auth.md.",
    responses: {
      "204": {
        description: "Allowed (by an allow or report rule, or the default)",
        headers: {
          ...rateLimitHeaders,
          "X-IP-Country": {
            schema: { type: "string" },
            description: "ISO code; empty when unknown",
          },
          "X-IP-ASN": {
            schema: { type: "string" },
            description: "AS number; empty when unknown",
          },
          "X-IP-Risk": {
            schema: { type: "string" },
            description:
              "Comma-separated flags that hold: tor, vpn, relay, hosting, threat; then crawler:<name> (verified) or fake-crawler:<name>",
          },
          "X-IP-Policy-Rule": {
            schema: { type: "string" },
            description: "The deciding rule, or default",
          },
        },
      },
      "403": { description: "Denied; the same headers as 204" },
      "400": lookupErrors["400"],
      "401": lookupErrors["401"],
      "404": errorResponse("No policy configured (IPINTEL_POLICY), or an invalid caller address"),
      "429": lookupErrors["429"],
      "500": everyRoute["500"],
      "503": lookupErrors["503"],
    },
  },
};

/** The OpenAPI operations of `/bulk/{ip_list}`. */
export const BULK_LIST_DOC = {
  get: {
    summary: "Look up several comma-separated addresses",
    description:
      "Items keep the request's order; a failed item is `{ip, error}` in place. Each address costs one rate-limit unit. Up to IPINTEL_BULK_MAX addresses are answered whole (refused whole when over the limit); a longer list, or `format=ndjson`, is streamed like `POST /bulk`.",
    parameters: [
      { name: "ip_list", in: "path", required: true, schema: { type: "string" } },
      ...bulkQueryParameters,
    ],
    responses: {
      "200": {
        ...ok("One item per address", "BulkEnvelope"),
        content: bulkFormats("BulkEnvelope"),
      },
      ...lookupErrors,
    },
  },
};

/** The OpenAPI operations of `/bulk`. */
export const BULK_DOC = {
  post: {
    summary: "Look up a list of addresses of any length, answered as a stream",
    description:
      "The body is read as the answer is written, in input order, each item charged one rate-limit unit as the stream goes. When the budget runs out (or the body turns out malformed) after the first answers, the stream ends with the final record `incomplete`; before them, the status says it (429, 400). CSV always has the `error.status` and `error.message` columns.",
    parameters: bulkQueryParameters,
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["ips"],
            properties: {
              userAgent: {
                type: "string",
                description:
                  "Before `ips` in a long body (after it only within the first chunk read)",
              },
              ips: { type: "array", items: { type: "string" } },
            },
          },
        },
        "text/plain": {
          schema: { type: "string", description: "One address a line; blank lines skipped" },
        },
        "application/x-ndjson": {
          schema: {
            type: "string",
            description: 'One JSON string or {"ip": "..."} a line; other lines fail in place',
          },
        },
      },
    },
    responses: {
      "200": {
        ...ok("One item per address", "BulkEnvelope"),
        content: bulkFormats("BulkEnvelope"),
      },
      ...lookupErrors,
      "415": errorResponse("Body sent without a JSON, plain-text or NDJSON Content-Type"),
    },
  },
};

/** The OpenAPI operations of `/health`. */
export const HEALTH_DOC = {
  get: {
    summary: "Liveness: the process answers (also while the data is loading)",
    responses: {
      "200": { description: '{"success":true,"data":{"status":"ok"}}' },
      ...everyRoute,
    },
  },
};

/** The OpenAPI operations of `/ready`. */
export const READY_DOC = {
  get: {
    summary:
      "Readiness: the data is loaded and the Deno KV answers; lists the loaded databases with their licences and attribution",
    responses: {
      "200": { description: "Ready, with the loaded databases" },
      ...everyRoute,
      "503": errorResponse("Not ready; the message says why"),
    },
  },
};

/** The OpenAPI operations of `/metrics`. */
export const METRICS_DOC = {
  get: {
    summary:
      "Prometheus metrics (text format 0.0.4); with IPINTEL_METRICS_TOKEN set, only for Authorization: Bearer <token>",
    responses: {
      "200": { description: "Metrics in the Prometheus text format" },
      ...everyRoute,
      "401": errorResponse("Missing or wrong metrics token"),
    },
  },
};

/** The OpenAPI operations of `/status`. */
export const STATUS_DOC = {
  get: {
    summary:
      "Each loaded source's data date, age, size, licence; configured sources that are absent",
    responses: {
      "200": { description: "Data status" },
      ...everyRoute,
      "401": lookupErrors["401"],
      "503": errorResponse("Data is not loaded yet"),
    },
  },
};

/** The OpenAPI operations of `/openapi.json`. */
export const OPENAPI_DOC = {
  get: {
    summary: "This document",
    responses: { "200": { description: "OpenAPI 3.1 document" }, ...everyRoute },
  },
};

/** The OpenAPI operations of `/mcp`. */
export const MCP_DOC = {
  post: {
    summary:
      "The Model Context Protocol server for AI assistants (Streamable HTTP, stateless, JSON answers): tools lookup_ip, lookup_many, explain_risk, asn, policy_decision, data_status",
    description:
      "A JSON-RPC 2.0 message, or a batch of up to 32, in; the answers out (docs/mcp.md). The API's keys and limits: a key with no unit left is refused (429) before the body is read; each tool call is charged as it would be alone, one unit per address it looks up, and a call over the limit is a tool error with the API's message. The body is at most 1 MiB (413). 404 with IPINTEL_MCP=false.",
    requestBody: {
      required: true,
      content: { "application/json": { schema: { type: "object" } } },
    },
    responses: {
      "200": {
        description: "The JSON-RPC answer",
        headers: rateLimitHeaders,
        content: { "application/json": { schema: { type: "object" } } },
      },
      "202": { description: "A notification or response accepted (no body)" },
      ...everyRoute,
      "400": {
        description:
          "A JSON-RPC error object: parse error (-32700), invalid request (-32600: the envelope, a batch over 32 messages, nesting over 32 levels, an unsupported MCP-Protocol-Version) or invalid params (-32602)",
        content: { "application/json": { schema: { type: "object" } } },
      },
      "401": lookupErrors["401"],
      "413": errorResponse("Body over 1 MiB"),
      "429": lookupErrors["429"],
      "404": errorResponse("IPINTEL_MCP is off"),
      "406": { description: "Accept names neither application/json nor text/event-stream" },
      "415": { description: "Body sent without Content-Type: application/json" },
    },
  },
};

/** The OpenAPI operations of `/asn/{n}` (src/core/asn/openapi.ts). */
export const ASN_DOC = asnPathItem({ rateLimitHeaders });

/**
 * A route's path item: its operations, each with the `security` its `access` says (a keyed
 * route: KEY_SECURITY, before the request body and responses; a compatible API's own
 * credentials are in its doc; an open route has none).
 */
function pathItem(route: Route): Route["doc"] {
  if (route.access !== "key") return route.doc;
  const item: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(route.doc)) {
    item[key] = OPERATIONS.has(key) ? withSecurity(value as Record<string, unknown>) : value;
  }
  return item;
}

const OPERATIONS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

function withSecurity(operation: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(operation)) {
    if ((key === "requestBody" || key === "responses") && !("security" in out)) {
      out.security = KEY_SECURITY;
    }
    out[key] = value;
  }
  out.security ??= KEY_SECURITY;
  return out;
}

/**
 * The document served at `/openapi.json`: its `paths` are the routes'
 * declarations, in their order, each with its own operations.
 */
export function openApiDocument(routes: readonly Route[]) {
  return {
    openapi: "3.1.0",
    info: {
      title: "ipintel",
      version: denoJson.version,
      description:
        "Self-hosted IP intelligence: geolocation, time zone, currency, network, user agent and security. Every GET also answers HEAD (same headers, no body). A method a path does not serve (PUT, TRACE, POST /me, …) is answered 405 with an Allow header listing those it does.",
      license: { name: "MIT", identifier: "MIT" },
    },
    paths: Object.fromEntries(routes.map((route) => [route.path, pathItem(route)])),
    components: {
      schemas,
      securitySchemes: {
        apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key" },
        bearer: { type: "http", scheme: "bearer", description: "Authorization: Bearer <key>" },
        apiKeyQuery: { type: "apiKey", in: "query", name: "apiKey" },
        ...COMPAT_SECURITY_SCHEMES,
      },
    },
  };
}
