/**
 * ip-api.com's JSON API at its own paths, so scripts only change the host:
 * `GET /json/{ip}` (`/json/` for the caller) with `fields` (names or the
 * numeric bitmask) and `lang`, and `POST /batch` (up to 100 queries, strings
 * or `{query, fields, lang}`). The key comes in `key` as ip-api Pro sends it,
 * or in ipintel's own X-API-Key / apiKey. Answers use ip-api's field names;
 * a failed query is `status: "fail"` with ip-api's messages.
 */

import type { RateDecision } from "../keys_limits/rate_limiter.ts";
import {
  type AppError,
  BadRequestError,
  InvalidIpError,
  NotFoundError,
  type RateLimitedError,
} from "../../base/errors.ts";
import { CONTENT_TYPES } from "../../core/format/render.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import { anonymizerFlags } from "../../data/risk/security.ts";
import type { Json } from "../../base/types.ts";
import type { AppContext, Served } from "../http/env.ts";
import type { Route } from "../http/route.ts";
import {
  decisionOf,
  ownKeyHeader,
  readJson,
  type VendorAnswer,
  vendorRoute,
} from "./vendor_route.ts";
import { IPAPI_BATCH_MAX, IPAPI_FIELDS } from "./fields.ts";
import { IPAPI_BATCH_DOC, IPAPI_IP_DOC, IPAPI_ME_DOC } from "./openapi.ts";

import { BEARER_CHALLENGE, bearerToken } from "../keys_limits/credentials.ts";

const JSON_TYPE = CONTENT_TYPES.json;

/** ip-api's default: status, message, country … as, query (its documented 61439). */
const DEFAULT_FIELDS = new Set([
  "status",
  "message",
  "country",
  "countryCode",
  "region",
  "regionName",
  "city",
  "zip",
  "lat",
  "lon",
  "timezone",
  "isp",
  "org",
  "as",
  "query",
]);

/** The fields a `fields` value asks for: comma-separated names, or the numeric bitmask. */
export function parseIpApiFields(value: string | undefined | null): ReadonlySet<string> {
  if (value === undefined || value === null || value.trim() === "") return DEFAULT_FIELDS;
  if (/^\d+$/.test(value.trim())) {
    const mask = Number(value.trim());
    // Bits above 2^31 do not survive `&`: compare by division instead.
    return new Set(
      IPAPI_FIELDS.filter(([, bit]) => Math.floor(mask / bit) % 2 === 1).map(([name]) => name),
    );
  }
  // Unknown names are ignored, as ip-api ignores them.
  return new Set(value.split(",").map((name) => name.trim()));
}

/** One query's answer; failures as ip-api's `status: "fail"` (other errors are thrown). */
export function ipapiBody(
  lookup: Lookup,
  query: string,
  fields: ReadonlySet<string>,
  lang: string | null,
): Record<string, Json> {
  let detail;
  try {
    detail = lookup.detail(query, { lang });
  } catch (error) {
    const message = failMessage(error);
    if (message === null) throw error;
    // As ip-api does, a failure always carries status, message and query.
    return { status: "fail", message, query };
  }
  const { result, signals } = detail;
  const flags = anonymizerFlags(signals);
  const g = result.geoLocation;
  const c = result.connection;
  const text = (value: string | null) => value ?? "";
  const values: Record<string, Json> = {
    status: "success",
    continent: text(g.continent),
    continentCode: text(g.continentCode),
    country: text(g.country),
    countryCode: text(g.countryCode),
    region: text(g.regionCode),
    regionName: text(g.region),
    city: text(g.city),
    district: "",
    zip: text(g.postal_Code),
    lat: g.latitude,
    lon: g.longitude,
    timezone: text(result.timezone.time_zone),
    offset: result.timezone.offset,
    currency: text(result.currency.code),
    isp: text(c.isp),
    org: text(c.org),
    as: c.asn_number === null ? "" : `AS${c.asn_number}${c.asn_org ? ` ${c.asn_org}` : ""}`,
    asname: "",
    reverse: "",
    mobile: c.connection_type === "Cellular",
    proxy: flags.vpn || flags.tor || flags.relay,
    hosting: flags.hosting,
    query: result.ip,
  };
  const body: Record<string, Json> = {};
  for (const [name] of IPAPI_FIELDS) {
    const value = values[name];
    // Unknown numbers are left out; ip-api has no message on success.
    if (fields.has(name) && value !== undefined && value !== null) body[name] = value;
  }
  return body;
}

/** ip-api's message for a query that fails, or null for an error that is not the query's. */
function failMessage(error: unknown): string | null {
  if (error instanceof InvalidIpError) return "invalid query";
  if (error instanceof NotFoundError) {
    const range = error.rangeName;
    if (range === null) return "no data";
    return range === "private network" || range === "unique local"
      ? "private range"
      : "reserved range";
  }
  return null;
}

/** Errors of the request as a whole: ip-api's fail body with our status and message. */
export function ipapiError(error: AppError | null): VendorAnswer {
  const answer = (status: number, message: string, headers?: Record<string, string>) => ({
    status,
    contentType: JSON_TYPE,
    body: JSON.stringify({ status: "fail", message }),
    headers,
  });
  if (error === null) return answer(500, "Internal server error");
  if (error.code === "rate_limited") {
    const retry = String((error as RateLimitedError).retryAfterSeconds);
    return answer(429, error.message, { "retry-after": retry, "x-rl": "0", "x-ttl": retry });
  }
  if (error.code === "unauthorized") {
    return answer(401, "invalid key: send the ipintel API key in the key parameter", {
      "www-authenticate": BEARER_CHALLENGE,
    });
  }
  const status: Record<string, number> = {
    data_unavailable: 503,
    payload_too_large: 413,
    unsupported_media_type: 415,
  };
  return answer(status[error.code] ?? 400, error.message);
}

/** ip-api's own rate headers: requests left (`X-Rl`) and seconds until the window resets (`X-Ttl`). */
function rateHeaders(decision: RateDecision | null): Record<string, string> | undefined {
  return decision
    ? { "x-rl": String(decision.remaining), "x-ttl": String(decision.resetSeconds) }
    : undefined;
}

/** The key an ip-api script sends. */
function keyOf(c: AppContext): string | null {
  // Authorization: Bearer too, the scheme its 401 names.
  return c.req.query("key") ?? ownKeyHeader(c.req.raw.headers) ?? c.req.query("apiKey") ??
    bearerToken(c.req.raw.headers.get("authorization")) ?? null;
}

/** `lang` when the City database carries it; ip-api answers English for any other. */
function langOf(value: unknown, served: Served): string | null {
  if (typeof value !== "string") return null;
  return served.data.city?.metadata.languages.includes(value) ? value : null;
}

/** The parameters of `/json/{ip}` and `/json`: the address (the caller's on `/json`), the fields. */
interface SingleQuery {
  query: string;
  fields: ReadonlySet<string>;
}

function single(c: AppContext, { query, fields }: SingleQuery, served: Served) {
  const body = ipapiBody(
    served.lookup,
    query,
    fields,
    langOf(c.req.query("lang"), served),
  );
  return {
    status: 200,
    contentType: JSON_TYPE,
    body: JSON.stringify(body),
    headers: rateHeaders(decisionOf(c)),
  };
}

/** One item of a batch: `"8.8.8.8"` or `{"query": "8.8.8.8", "fields": "...", "lang": "de"}`. */
interface BatchItem {
  query: string;
  fields?: string;
  lang?: string;
}

function batchItems(body: unknown): BatchItem[] {
  const bad = () =>
    new BadRequestError(
      'Invalid JSON body: expected an array of addresses or {"query", "fields", "lang"} objects',
    );
  if (!Array.isArray(body)) throw bad();
  return body.map((item) => {
    if (typeof item === "string") return { query: item };
    if (
      typeof item === "object" && item !== null && typeof item.query === "string" &&
      (item.fields === undefined || typeof item.fields === "string" ||
        typeof item.fields === "number") &&
      (item.lang === undefined || typeof item.lang === "string")
    ) {
      return { query: item.query, fields: item.fields?.toString(), lang: item.lang };
    }
    throw bad();
  });
}

/** ip-api's label in metrics and logs: `/json` and `/json/{ip}`. */
const IPAPI_FAMILY = "/json/{ip}";

export const IPAPI_ROUTES: readonly Route[] = [
  // `/json` and `/json/`: the caller.
  vendorRoute<SingleQuery>({
    method: "GET",
    path: "/json",
    family: IPAPI_FAMILY,
    empty: true,
    doc: IPAPI_ME_DOC,
    error: ipapiError,
    key: keyOf,
    read: (c, tools) => ({
      query: tools.client(c),
      fields: parseIpApiFields(c.req.query("fields")),
    }),
    cost: () => 1,
    answer: single,
  }),
  vendorRoute<SingleQuery>({
    method: "GET",
    path: "/json/{ip}",
    family: IPAPI_FAMILY,
    empty: false,
    doc: IPAPI_IP_DOC,
    error: ipapiError,
    key: keyOf,
    read: (c) => ({ query: c.req.param("ip")!, fields: parseIpApiFields(c.req.query("fields")) }),
    cost: () => 1,
    answer: single,
  }),
  vendorRoute<BatchItem[]>({
    method: "POST",
    path: "/batch",
    family: "/batch",
    doc: IPAPI_BATCH_DOC,
    error: ipapiError,
    key: keyOf,
    async read(c) {
      // ip-api reads the body as JSON whatever its Content-Type (`curl -d` sends a form type).
      const body = await readJson(c, IPAPI_BATCH_MAX * 256, { anyContentType: true });
      const items = batchItems(body);
      if (items.length === 0 || items.length > IPAPI_BATCH_MAX) {
        throw new BadRequestError(
          `Batch of ${items.length} queries: give 1 to ${IPAPI_BATCH_MAX}, as ip-api allows`,
        );
      }
      return items;
    },
    cost: (items) => items.length,
    answer(c, items, served) {
      const fields = c.req.query("fields");
      const lang = c.req.query("lang");
      const answers = items.map((item) =>
        ipapiBody(
          served.lookup,
          item.query,
          parseIpApiFields(item.fields ?? fields),
          langOf(item.lang ?? lang, served),
        )
      );
      return {
        status: 200,
        contentType: JSON_TYPE,
        body: JSON.stringify(answers),
        headers: rateHeaders(decisionOf(c)),
      };
    },
  }),
];

export { IPAPI_BATCH_MAX, IPAPI_FIELDS };
