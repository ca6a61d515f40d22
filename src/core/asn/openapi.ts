/**
 * The OpenAPI 3.1 fragment of `GET /asn/{n}` and of the opt-in `network` of a
 * lookup, for src/service/http/openapi.ts to add: the path item and the schemas (derived
 * from ASN_LAYOUT and NETWORK_LAYOUT, so they follow the answer).
 */

import {
  isLayoutLeaf,
  type LayoutGroup,
  type LayoutLeaf,
  NETWORK_LAYOUT,
} from "../../base/types.ts";
import { ASN_LAYOUT } from "./layout.ts";

type Schema = Record<string, unknown>;

function leafSchema(leaf: LayoutLeaf): Schema {
  const schema: Schema = { type: leaf.nullable ? [leaf.leaf, "null"] : leaf.leaf };
  // An array without an item layout holds strings (the prefixes).
  if (leaf.leaf === "array") {
    schema.items = leaf.items ? groupSchema(leaf.items) : { type: "string" };
  }
  if (leaf.enum) schema.enum = leaf.nullable ? [...leaf.enum, null] : [...leaf.enum];
  if (leaf.description) schema.description = leaf.description;
  return schema;
}

/** A group: every key required, no others (as the lookup result's schemas). */
function groupSchema(group: LayoutGroup): Schema {
  const properties: Record<string, Schema> = {};
  for (const [key, node] of Object.entries(group)) {
    properties[key] = isLayoutLeaf(node) ? leafSchema(node) : groupSchema(node);
  }
  return { type: "object", properties, required: Object.keys(group), additionalProperties: false };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Schemas to add under `components.schemas` (they refer to the document's `Error`). */
export const ASN_OPENAPI_SCHEMAS: Readonly<Record<string, Schema>> = {
  Asn: {
    description: "An autonomous system as the installed ASN source and lists know it",
    ...groupSchema(ASN_LAYOUT),
  },
  AsnSelection: {
    type: "object",
    description: "The AS with `get`: `asn`, plus each chosen name (as for /ip's Selection)",
    properties: { asn: { type: "integer" } },
    required: ["asn"],
  },
  AsnEnvelope: {
    type: "object",
    properties: {
      success: { type: "boolean", const: true },
      data: { anyOf: [ref("Asn"), ref("AsnSelection")] },
    },
    required: ["success", "data"],
    additionalProperties: false,
  },
  MatchedNetworks: {
    description:
      "Opt-in (`get=network`): each source that answered for the address and the network it matched",
    ...leafSchema(NETWORK_LAYOUT),
  },
};

const errorResponse = (description: string) => ({
  description,
  content: {
    "application/json": { schema: ref("Error") },
    "application/xml": { schema: { type: "string" } },
  },
});

/** The path item of `/asn/{n}`; rate-limit headers as /ip/{ip} has them (its `security` comes from its route's `access`). */
export function asnPathItem(
  options: { rateLimitHeaders: Record<string, unknown> },
): Record<string, unknown> {
  return {
    parameters: [{
      name: "n",
      in: "path",
      required: true,
      schema: { type: "string", pattern: "^([Aa][Ss])?[0-9]+$" },
      description: "The AS number: 15169, AS15169 or as15169",
      example: "AS15169",
    }],
    get: {
      summary: "An autonomous system: its name, prefixes, counts and the lists naming part of it",
      description:
        "Built from the installed ASN database (its index is made on the first question after " +
        "each data load). With the keys and limits of /ip/{ip}; charged 1 unit, and 1 more per full " +
        "1,000 prefixes in the answer (those of the families `get` keeps): RateLimit-Remaining drops " +
        "by the whole cost. The rendered answer is kept per data set, AS, format and `get`.",
      parameters: [
        {
          name: "get",
          in: "query",
          schema: { type: "string" },
          description:
            "Comma-separated names, case-insensitive: asn, name, country, prefixes (ipv4, ipv6), counts (ipv4Prefixes, ipv6Prefixes, ipv4Addresses, ipv6Slash64s), lists; or dotted paths (prefixes.ipv4). `asn` is always included.",
        },
        {
          name: "format",
          in: "query",
          schema: { type: "string", enum: ["json", "xml", "csv"], default: "json" },
          description:
            "Case-insensitive; anything else (ndjson included) is a 400 naming it. CSV: one row per prefix (asn, name, country, version, prefix); without prefixes in `get`, one row of the chosen fields.",
        },
        {
          name: "at",
          in: "query",
          schema: { type: "string" },
          description:
            "Checked as on /ip/{ip} (a malformed time is a 400 naming it) but not applied: the lists are today's.",
        },
        {
          name: "apiKey",
          in: "query",
          schema: { type: "string" },
          description: "API key (wins over the headers); prefer the X-API-Key header.",
        },
      ],
      responses: {
        "200": {
          description: "The AS",
          headers: options.rateLimitHeaders,
          content: {
            "application/json": { schema: ref("AsnEnvelope") },
            "application/xml": { schema: { type: "string" } },
            "text/csv": { schema: { type: "string" } },
          },
        },
        "400": errorResponse(
          "A malformed AS number (named in the message), unknown `get` names, a `format` other than json, xml or csv, or a malformed `at`",
        ),
        "401": errorResponse("API key missing or invalid, where one is required"),
        "404": errorResponse(
          "An AS the data holds no network for, or a private-use, documentation or reserved AS number",
        ),
        "429": {
          ...errorResponse("Over the rate limit"),
          headers: { "Retry-After": { schema: { type: "integer" }, description: "Seconds" } },
        },
        "500": errorResponse(
          "Unexpected failure (generic message; details only in the server log)",
        ),
        "503": errorResponse("Data is not loaded yet, or no ASN database is installed"),
      },
    },
  };
}
