/** The OpenAPI 3.1 description of every route; a test holds it against the app's routes. */

const nullable = (type: string) => ({ type: [type, "null"] });
const str = nullable("string");
const num = nullable("number");
const nameVersion = { type: "object", properties: { name: str, version: str } };

const schemas = {
  GeoLocation: {
    type: "object",
    properties: {
      continent: str,
      continentCode: str,
      country: str,
      countryCode: str,
      capital: str,
      region: str,
      regionCode: str,
      city: str,
      postal_Code: str,
      dial_code: str,
      is_in_eu: { type: "boolean" },
      latitude: num,
      longitude: num,
      accuracy_radius: num,
    },
  },
  TimeZone: {
    type: "object",
    properties: {
      time_zone: str,
      abbr: str,
      offset: { ...num, description: "Seconds east of UTC" },
      is_dst: nullable("boolean"),
      utc: { ...str, description: "±HH:MM" },
      current_time: { ...str, description: "ISO 8601 local time with offset" },
    },
  },
  Flag: { type: "object", properties: { flag_Icon: str, flag_unicode: str } },
  Currency: {
    type: "object",
    properties: { code: str, symbol: str, name: str, name_plural: str, hex_unicode: str },
  },
  Connection: {
    type: "object",
    properties: {
      asn_number: num,
      asn_org: str,
      isp: str,
      org: str,
      domain: str,
      connection_type: str,
    },
  },
  UserAgent: {
    type: "object",
    properties: {
      browser: nameVersion,
      engine: nameVersion,
      os: nameVersion,
      device: { type: "object", properties: { type: str, vendor: str, model: str } },
      cpu: { type: "object", properties: { architecture: { type: "string" } } },
    },
  },
  Security: {
    type: "object",
    properties: {
      isVpn: nullable("boolean"),
      isTor: nullable("boolean"),
      isThreat: { type: ["string", "null"], enum: ["low", "medium", "high", null] },
    },
  },
  LookupResult: {
    type: "object",
    description: "With `get`, only the chosen fields (and `ip`) are present.",
    properties: {
      ip: { type: "string" },
      geoLocation: { $ref: "#/components/schemas/GeoLocation" },
      timezone: { $ref: "#/components/schemas/TimeZone" },
      flag: { $ref: "#/components/schemas/Flag" },
      currency: { $ref: "#/components/schemas/Currency" },
      connection: { $ref: "#/components/schemas/Connection" },
      userAgent: { $ref: "#/components/schemas/UserAgent" },
      security: { $ref: "#/components/schemas/Security" },
    },
    required: ["ip"],
  },
  FailedItem: {
    type: "object",
    properties: {
      ip: { type: "string" },
      error: {
        type: "object",
        properties: { status: { type: "integer" }, message: { type: "string" } },
      },
    },
  },
  Envelope: {
    type: "object",
    properties: {
      success: { type: "boolean" },
      data: { $ref: "#/components/schemas/LookupResult" },
    },
  },
  BulkEnvelope: {
    type: "object",
    properties: {
      success: { type: "boolean" },
      data: {
        type: "object",
        properties: {
          responseArray: {
            type: "array",
            items: {
              oneOf: [
                { $ref: "#/components/schemas/LookupResult" },
                { $ref: "#/components/schemas/FailedItem" },
              ],
            },
          },
        },
      },
    },
  },
  Error: {
    type: "object",
    properties: { success: { type: "boolean", const: false }, message: { type: "string" } },
  },
};

const queryParameters = [
  {
    name: "get",
    in: "query",
    schema: { type: "string" },
    description:
      "Comma-separated field names, case-insensitive: groups (geoLocation, currency, …), bare leaf names (country, city; returned flat) or dotted paths (currency.code; kept nested). `ip` is always included.",
  },
  {
    name: "format",
    in: "query",
    schema: { type: "string", enum: ["json", "xml", "csv"], default: "json" },
    description: "Case-insensitive; unknown values give JSON.",
  },
  {
    name: "lang",
    in: "query",
    schema: { type: "string", default: "en" },
    description:
      "Language of place names: one the City database carries (de, es, fr, ja, pt-BR, ru, zh-CN).",
  },
  {
    name: "ua",
    in: "query",
    schema: { type: "string" },
    description:
      "User-agent string to parse, when no JSON body gives one; default: the User-Agent header.",
  },
];

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

const formats = (schema: string) => ({
  "application/json": { schema: { $ref: `#/components/schemas/${schema}` } },
  "application/xml": { schema: { type: "string" } },
  "text/csv": { schema: { type: "string" } },
});

const userAgentBody = {
  required: false,
  description: "Optional, sent on the GET with Content-Type: application/json (at most 8 KiB).",
  content: {
    "application/json": {
      schema: { type: "object", properties: { userAgent: { type: "string" } } },
    },
  },
};

const lookupErrors = {
  "400": errorResponse("Unknown `get` names, unsupported `lang`, malformed JSON body"),
  "413": errorResponse("Request body over the limit"),
  "500": errorResponse("Unexpected failure (details only in the server log)"),
  "503": errorResponse("No data loaded"),
};

/** The document served at `/openapi.json`. */
export const OPENAPI_DOCUMENT = {
  openapi: "3.1.0",
  info: {
    title: "ipintel",
    version: "1.0.0",
    description:
      "Self-hosted IP intelligence: geolocation, time zone, currency, network, user agent and security.",
    license: { name: "MIT", identifier: "MIT" },
  },
  paths: {
    "/ip/{ip}": {
      get: {
        summary: "Look up one IPv4 or IPv6 address",
        parameters: [
          { name: "ip", in: "path", required: true, schema: { type: "string" } },
          ...queryParameters,
        ],
        requestBody: userAgentBody,
        responses: {
          "200": { description: "The lookup result", content: formats("Envelope") },
          "404": errorResponse("Invalid IP address, or no data for it"),
          ...lookupErrors,
        },
      },
    },
    "/": {
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
    },
    "/assets/{name}": {
      get: {
        summary: "The lookup page's script, style and world map, under content-hashed names",
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": { description: "The file (cached for a year; gzip when accepted)" },
          "304": { description: "The If-None-Match ETag is current" },
          "404": errorResponse("No such file, or the page is off (IPINTEL_WEB=false)"),
        },
      },
    },
    "/me": {
      get: {
        summary: "Look up the caller's own address",
        description:
          "The TCP peer; X-Forwarded-For/Forwarded only from configured trusted proxies.",
        parameters: queryParameters,
        requestBody: userAgentBody,
        responses: {
          "200": { description: "The lookup result", content: formats("Envelope") },
          "404": errorResponse("No data for the caller's address"),
          ...lookupErrors,
        },
      },
    },
    "/bulk/{ip_list}": {
      get: {
        summary: "Look up several comma-separated addresses",
        description: "Items keep the request's order; a failed item is `{ip, error}` in place.",
        parameters: [
          { name: "ip_list", in: "path", required: true, schema: { type: "string" } },
          ...queryParameters,
        ],
        requestBody: userAgentBody,
        responses: {
          "200": { description: "One item per address", content: formats("BulkEnvelope") },
          ...lookupErrors,
        },
      },
    },
    "/bulk": {
      post: {
        summary: "Look up a list of addresses too long for a URL",
        parameters: queryParameters,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["ips"],
                properties: {
                  ips: { type: "array", items: { type: "string" } },
                  userAgent: { type: "string" },
                },
              },
            },
          },
        },
        responses: {
          "200": { description: "One item per address", content: formats("BulkEnvelope") },
          ...lookupErrors,
        },
      },
    },
    "/health": {
      get: {
        summary: "Liveness, and the loaded databases with their licences and attribution",
        responses: { "200": { description: "Service status" } },
      },
    },
    "/status": {
      get: {
        summary:
          "Each loaded source's data date, age, size, licence; configured sources that are absent",
        responses: { "200": { description: "Data status" }, "503": { description: "Loading" } },
      },
    },
    "/openapi.json": {
      get: {
        summary: "This document",
        responses: { "200": { description: "OpenAPI 3.1 document" } },
      },
    },
  },
  components: { schemas },
} as const;
