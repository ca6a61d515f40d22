/**
 * The compatible APIs in `/openapi.json`: their paths (the same text as their
 * metric labels, labels.ts), parameters, keys and answer shapes. The shapes
 * are the vendors' own, so they are described, not restated field by field.
 */

import { IPAPI_BATCH_MAX, IPAPI_FIELDS, IPINFO_FIELDS } from "./fields.ts";

const json = (schema: unknown, type = "application/json") => ({ [type]: { schema } });
const ipParameter = (description: string) => ({
  name: "ip",
  in: "path",
  required: true,
  schema: { type: "string" },
  description,
});

const maxmindError = {
  type: "object",
  required: ["code", "error"],
  properties: { code: { type: "string" }, error: { type: "string" } },
};
const maxmindErrors = {
  "400": {
    description: "IP_ADDRESS_INVALID, or IP_ADDRESS_RESERVED (a reserved range no database holds)",
    content: json(maxmindError, "application/vnd.maxmind.com-error+json"),
  },
  "401": {
    description: "AUTHORIZATION_INVALID: missing or wrong key",
    content: json(maxmindError, "application/vnd.maxmind.com-error+json"),
  },
  "404": {
    description: "IP_ADDRESS_NOT_FOUND",
    content: json(maxmindError, "application/vnd.maxmind.com-error+json"),
  },
  "429": {
    description: "OUT_OF_QUERIES: over the key's rate limit (Retry-After says when to retry)",
    content: json(maxmindError, "application/vnd.maxmind.com-error+json"),
  },
  "503": {
    description: "SERVER_ERROR: data not loaded yet",
    content: json(maxmindError, "application/vnd.maxmind.com-error+json"),
  },
};

const maxmindService = (service: string, what: string) => ({
  parameters: [ipParameter("An IPv4 or IPv6 address, or `me` for the caller")],
  get: {
    summary: `MaxMind GeoIP2 ${service} web service (${what})`,
    description:
      "For MaxMind's official clients: point their host at ipintel. HTTP Basic auth: any account id, the ipintel API key as the licence key. The body is the City record's own structure (names in every language the database has) plus `traits` (`ip_address`, `network`, and on city/insights the ASN, and ISP fields where an ISP database is loaded); insights adds the anonymizer flags the security sources give (each only when true).",
    security: [{ maxmindBasic: [] }, { apiKeyHeader: [] }, {}],
    responses: {
      "200": {
        description: `MaxMind's ${service} body`,
        content: json(
          {
            type: "object",
            required: ["traits"],
            properties: {
              traits: {
                type: "object",
                required: ["ip_address", "network"],
                properties: { ip_address: { type: "string" }, network: { type: "string" } },
              },
              maxmind: {
                type: "object",
                properties: { queries_remaining: { type: "integer" } },
              },
            },
          },
          `application/vnd.maxmind.com-${service}+json`,
        ),
      },
      ...maxmindErrors,
    },
  },
});

const ipinfoError = {
  type: "object",
  required: ["status", "error"],
  properties: {
    status: { type: "integer" },
    error: {
      type: "object",
      properties: { title: { type: "string" }, message: { type: "string" } },
    },
  },
};
const ipinfoBody = {
  type: "object",
  required: ["ip"],
  properties: Object.fromEntries(
    IPINFO_FIELDS.map((field) => [
      field,
      field === "asn" || field === "privacy"
        ? { type: "object" }
        : { type: field === "bogon" ? "boolean" : "string" },
    ]),
  ),
};
const ipinfoSecurity = [{ ipinfoToken: [] }, { bearer: [] }, { apiKeyHeader: [] }, {}];
const ipinfoErrors = {
  "403": { description: "Unknown token", content: json(ipinfoError) },
  "404": { description: "Wrong ip: not an IP address", content: json(ipinfoError) },
  "429": { description: "Rate limit exceeded", content: json(ipinfoError) },
  "503": { description: "Data not loaded yet", content: json(ipinfoError) },
};

const ipapiBody = {
  type: "object",
  properties: Object.fromEntries(IPAPI_FIELDS.map(([name]) => [name, {}])),
  description:
    'ip-api\'s fields; a failed query is {"status":"fail","message":"invalid query" | "private range" | "reserved range" | "no data","query"}',
};
const ipapiParameters = [
  {
    name: "fields",
    in: "query",
    schema: { type: "string" },
    description: "Comma-separated field names, or ip-api's numeric bitmask (66846719: all)",
  },
  {
    name: "lang",
    in: "query",
    schema: { type: "string" },
    description: "A language of the City database; English otherwise",
  },
];
const ipapiSecurity = [{ ipapiKey: [] }, { apiKeyHeader: [] }, {}];
const ipapiErrors = {
  "401": { description: '{"status":"fail"}: missing or wrong key', content: json(ipapiBody) },
  "429": {
    description: '{"status":"fail"}: over the rate limit (Retry-After, X-Ttl)',
    content: json(ipapiBody),
  },
};

/** The compatible APIs' paths, merged into the document's `paths`. */
/** The OpenAPI operations of `/geoip/v2.1/country/{ip}`. */
export const MAXMIND_COUNTRY_DOC = maxmindService("country", "continent and countries");

/** The OpenAPI operations of `/geoip/v2.1/city/{ip}`. */
export const MAXMIND_CITY_DOC = maxmindService(
  "city",
  "country, subdivisions, city, location, ASN",
);

/** The OpenAPI operations of `/geoip/v2.1/insights/{ip}`. */
export const MAXMIND_INSIGHTS_DOC = maxmindService("insights", "city and anonymizer flags");

/** The OpenAPI operations of `/ipinfo`. */
export const IPINFO_ME_DOC = {
  get: {
    summary: "ipinfo: the caller (also `/ipinfo/` and `/ipinfo/json`)",
    security: ipinfoSecurity,
    responses: {
      "200": { description: "ipinfo's body", content: json(ipinfoBody) },
      ...ipinfoErrors,
    },
  },
};

/** The OpenAPI operations of `/ipinfo/{ip}`. */
export const IPINFO_IP_DOC = {
  parameters: [
    ipParameter(
      "An address, or for the caller `json`, a field name (`/ipinfo/city`) or nothing (`/ipinfo/`)",
    ),
  ],
  get: {
    summary: "ipinfo: one address (node-ipinfo with baseUrl …/ipinfo)",
    description:
      "Unknown values are left out. A reserved range with no data answers {ip, bogon: true}. The key: ?token=, Authorization: Bearer, or X-API-Key.",
    security: ipinfoSecurity,
    responses: {
      "200": { description: "ipinfo's body", content: json(ipinfoBody) },
      ...ipinfoErrors,
    },
  },
};

/** The OpenAPI operations of `/ipinfo/{ip}/{field}`. */
export const IPINFO_FIELD_DOC = {
  parameters: [
    ipParameter("An IPv4 or IPv6 address"),
    {
      name: "field",
      in: "path",
      required: true,
      schema: { type: "string", enum: ["json", ...IPINFO_FIELDS] },
    },
  ],
  get: {
    summary: "ipinfo: one field as plain text (`json`: the whole body)",
    security: ipinfoSecurity,
    responses: {
      "200": {
        description: 'The value and a newline ("undefined" when unknown); JSON for objects',
        content: { "text/plain": { schema: { type: "string" } }, ...json(ipinfoBody) },
      },
      ...ipinfoErrors,
    },
  },
};

/** The OpenAPI operations of `/ipinfo/batch`. */
export const IPINFO_BATCH_DOC = {
  post: {
    summary: "ipinfo: many paths at once",
    security: ipinfoSecurity,
    requestBody: {
      required: true,
      content: json({ type: "array", items: { type: "string" } }),
      description: 'Paths like "8.8.8.8" or "8.8.8.8/city", at most IPINTEL_BULK_MAX',
    },
    responses: {
      "200": { description: "An object keyed by path", content: json({ type: "object" }) },
      "400": { description: "Not an array of paths, or too many", content: json(ipinfoError) },
      ...ipinfoErrors,
    },
  },
};

/** The OpenAPI operations of `/json`. */
export const IPAPI_ME_DOC = {
  get: {
    summary: "ip-api.com: the caller (also `/json/`)",
    parameters: ipapiParameters,
    security: ipapiSecurity,
    responses: {
      "200": { description: "ip-api's body", content: json(ipapiBody) },
      ...ipapiErrors,
    },
  },
};

/** The OpenAPI operations of `/json/{ip}`. */
export const IPAPI_IP_DOC = {
  parameters: [ipParameter("An address; empty (`/json/`) for the caller")],
  get: {
    summary: "ip-api.com: one address",
    parameters: ipapiParameters,
    security: ipapiSecurity,
    responses: {
      "200": { description: "ip-api's body", content: json(ipapiBody) },
      ...ipapiErrors,
    },
  },
};

/** The OpenAPI operations of `/batch`. */
export const IPAPI_BATCH_DOC = {
  post: {
    summary: `ip-api.com: up to ${IPAPI_BATCH_MAX} queries`,
    parameters: ipapiParameters,
    security: ipapiSecurity,
    requestBody: {
      required: true,
      content: json({
        type: "array",
        maxItems: IPAPI_BATCH_MAX,
        items: {
          oneOf: [
            { type: "string" },
            {
              type: "object",
              required: ["query"],
              properties: {
                query: { type: "string" },
                fields: { type: ["string", "integer"] },
                lang: { type: "string" },
              },
            },
          ],
        },
      }),
    },
    responses: {
      "200": {
        description: "One answer per query, in order",
        content: json({ type: "array", items: ipapiBody }),
      },
      "400": {
        description: '{"status":"fail"}: malformed or too many',
        content: json(ipapiBody),
      },
      ...ipapiErrors,
    },
  },
};

/** The ways the compatible APIs take the key. */
export const COMPAT_SECURITY_SCHEMES = {
  maxmindBasic: {
    type: "http",
    scheme: "basic",
    description: "MaxMind's clients: any account id, the ipintel API key as the licence key",
  },
  ipinfoToken: { type: "apiKey", in: "query", name: "token" },
  ipapiKey: { type: "apiKey", in: "query", name: "key" },
} as const;
