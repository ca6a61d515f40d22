/**
 * MaxMind's GeoIP2 web services (Country, City, Insights) at their own paths,
 * so MaxMind's official clients work with only their host changed:
 * `GET /geoip/v2.1/{country|city|insights}/{ip|me}`, HTTP Basic auth with the
 * ipintel API key as the licence key (any account id), MaxMind's body shapes,
 * content types and `{code, error}` errors.
 *
 * The body is the City record's own structure (every language's names), as
 * the database holds it, plus `traits` from the rest of the lookup.
 */

import type { RateDecision } from "../keys_limits/rate_limiter.ts";
import type { AppError, NotFoundError, RateLimitedError } from "../../base/errors.ts";
import type { LookupDetail } from "../../core/lookup/lookup.ts";
import { anonymizerFlags } from "../../data/risk/security.ts";
import type { CityRecord } from "../../data/mmdb/records.ts";
import type { Json } from "../../base/types.ts";
import type { AppContext } from "../http/env.ts";
import type { Route } from "../http/route.ts";
import { decisionOf, ownKeyHeader, type VendorAnswer, vendorRoute } from "./vendor_route.ts";
import { MAXMIND_CITY_DOC, MAXMIND_COUNTRY_DOC, MAXMIND_INSIGHTS_DOC } from "./openapi.ts";
import { BASIC_CHALLENGE, basicCredentials } from "../keys_limits/credentials.ts";

export type MaxMindService = "country" | "city" | "insights";

export const MAXMIND_SERVICES: readonly MaxMindService[] = ["country", "city", "insights"];

/** The parts of a City record each service answers with (Country: no city, location or postal). */
const CITY_KEYS = [
  "city",
  "continent",
  "country",
  "location",
  "postal",
  "registered_country",
  "represented_country",
  "subdivisions",
] as const;
const RECORD_KEYS: Record<MaxMindService, readonly (keyof CityRecord | "represented_country")[]> = {
  country: ["continent", "country", "registered_country", "represented_country"],
  city: CITY_KEYS,
  insights: CITY_KEYS,
};

const contentType = (kind: MaxMindService | "error") =>
  `application/vnd.maxmind.com-${kind}+json; charset=UTF-8; version=${
    kind === "error" ? "2.0" : "2.1"
  }`;

/** What the body needs besides the lookup. */
export interface MaxMindContext {
  /** An ISP database is loaded: `isp` and `organization` are its (else they are left out). */
  hasIsp: boolean;
  /** The rate decision of this request: `maxmind.queries_remaining`. */
  decision: RateDecision | null;
}

/** The body of one service's answer. */
export function maxmindBody(
  service: MaxMindService,
  detail: LookupDetail,
  context: MaxMindContext,
): Record<string, Json> {
  const body: Record<string, Json> = {};
  const record = (detail.city ?? {}) as Record<string, Json | undefined>;
  for (const key of RECORD_KEYS[service]) {
    const value = record[key];
    if (value !== undefined) body[key] = value;
  }
  const { result, signals } = detail;
  const traits: Record<string, Json> = { ip_address: result.ip, network: detail.network };
  if (service !== "country") {
    const c = result.connection;
    const put = (key: string, value: string | number | null) => {
      if (value !== null) traits[key] = value;
    };
    put("autonomous_system_number", c.asn_number);
    put("autonomous_system_organization", c.asn_org);
    if (context.hasIsp) {
      put("isp", c.isp);
      put("organization", c.org);
    }
    put("domain", c.domain);
    put("connection_type", c.connection_type);
  }
  if (service === "insights") {
    // MaxMind sends each flag only when it is true.
    const anonymizer = anonymizerFlags(signals);
    const flags: [string, boolean][] = [
      ["is_anonymous", anonymizer.vpn || anonymizer.tor || anonymizer.relay],
      ["is_anonymous_vpn", anonymizer.vpn],
      ["is_hosting_provider", anonymizer.hosting],
      ["is_tor_exit_node", anonymizer.tor],
    ];
    for (const [key, value] of flags) if (value) traits[key] = true;
  }
  body.traits = traits;
  if (context.decision) body.maxmind = { queries_remaining: context.decision.remaining };
  return body;
}

/** MaxMind's error code and status for one of our errors (null: an unexpected failure). */
export function maxmindError(error: AppError | null): VendorAnswer {
  const answer = (
    status: number,
    code: string,
    message: string,
    headers?: Record<string, string>,
  ) => ({
    status,
    contentType: contentType("error"),
    body: JSON.stringify({ code, error: message }),
    headers,
  });
  if (error === null) return answer(500, "SERVER_ERROR", "Internal server error");
  switch (error.code) {
    case "invalid_ip":
      return answer(400, "IP_ADDRESS_INVALID", error.message);
    case "not_found":
      return (error as NotFoundError).rangeName
        ? answer(400, "IP_ADDRESS_RESERVED", error.message)
        : answer(404, "IP_ADDRESS_NOT_FOUND", error.message);
    case "unauthorized":
      return answer(
        401,
        "AUTHORIZATION_INVALID",
        "Invalid or missing API key: send the ipintel API key as the licence key (any account id)",
        { "www-authenticate": BASIC_CHALLENGE },
      );
    case "rate_limited":
      // MaxMind's clients map OUT_OF_QUERIES to their "out of queries" error.
      return answer(429, "OUT_OF_QUERIES", error.message, {
        "retry-after": String((error as RateLimitedError).retryAfterSeconds),
      });
    case "data_unavailable":
      return answer(503, "SERVER_ERROR", error.message);
    default:
      return answer(400, "INVALID_REQUEST", error.message);
  }
}

/** The key a MaxMind client sends: the licence key of Basic auth, else ipintel's X-API-Key. */
function keyOf(c: AppContext): string | null {
  const basic = basicCredentials(c.req.raw.headers);
  if (basic && basic.password !== "") return basic.password;
  return ownKeyHeader(c.req.raw.headers) ?? c.req.query("apiKey") ?? null;
}

/** The three services' routes. */
const DOCS: Record<MaxMindService, Route["doc"]> = {
  country: MAXMIND_COUNTRY_DOC,
  city: MAXMIND_CITY_DOC,
  insights: MAXMIND_INSIGHTS_DOC,
};

export const MAXMIND_ROUTES: readonly Route[] = MAXMIND_SERVICES.map((service) =>
  vendorRoute({
    method: "GET",
    path: `/geoip/v2.1/${service}/{ip}`,
    family: `/geoip/v2.1/${service}/{ip}`,
    empty: false,
    doc: DOCS[service],
    error: maxmindError,
    key: keyOf,
    read: (c, tools) => {
      const param = c.req.param("ip")!;
      return param === "me" ? tools.client(c) : param;
    },
    cost: () => 1,
    answer(c, ip, { lookup, data }) {
      const detail = lookup.detail(ip);
      const body = maxmindBody(service, detail, {
        hasIsp: data.isp !== null,
        decision: decisionOf(c),
      });
      return { status: 200, contentType: contentType(service), body: JSON.stringify(body) };
    },
  })
);
