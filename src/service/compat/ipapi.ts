/**
 * ip-api.com's JSON API at its own paths, so scripts only change the host:
 * `GET /json/{ip}` (`/json/` for the caller) with `fields` (names or the
 * numeric bitmask) and `lang`, and `POST /batch` (up to 100 queries, strings
 * or `{query, fields, lang}`). The key comes in `key` as ip-api Pro sends it,
 * or in ipintel's own X-API-Key / apiKey. Answers use ip-api's field names;
 * a failed query is `status: "fail"` with ip-api's messages.
 */

import type { RateDecision } from "../access/rate_limiter.ts";
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
import {
  type CompatAnswer,
  type CompatPipeline,
  type CompatRequest,
  type CompatRoute,
  ownKeyHeader,
} from "./pipeline.ts";

const JSON_TYPE = CONTENT_TYPES.json;

/** ip-api's fields in its output order, with the bit each has in the numeric `fields`. */
export const IPAPI_FIELDS: readonly (readonly [string, number])[] = [
  ["status", 16384],
  ["message", 32768],
  ["continent", 1048576],
  ["continentCode", 2097152],
  ["country", 1],
  ["countryCode", 2],
  ["region", 4],
  ["regionName", 8],
  ["city", 16],
  ["district", 524288],
  ["zip", 32],
  ["lat", 64],
  ["lon", 128],
  ["timezone", 256],
  ["offset", 33554432],
  ["currency", 8388608],
  ["isp", 512],
  ["org", 1024],
  ["as", 2048],
  ["asname", 4194304],
  ["reverse", 4096],
  ["mobile", 65536],
  ["proxy", 131072],
  ["hosting", 16777216],
  ["query", 8192],
];

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

/** Most queries in one `POST /batch`, as ip-api allows. */
export const IPAPI_BATCH_MAX = 100;

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
export function ipapiError(error: AppError | null): CompatAnswer {
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
    return answer(401, "invalid key: send the ipintel API key in the key parameter");
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
function keyOf(request: CompatRequest): string | null {
  return request.query("key") ?? ownKeyHeader(request.headers) ?? request.query("apiKey") ?? null;
}

/** `lang` when the City database carries it; ip-api answers English for any other. */
function langOf(value: unknown, pipeline: CompatPipeline): string | null {
  if (typeof value !== "string") return null;
  return pipeline.served().data.city?.metadata.languages.includes(value) ? value : null;
}

async function single(request: CompatRequest, pipeline: CompatPipeline, query: string | null) {
  pipeline.authenticate(keyOf(request));
  const decision = await pipeline.charge(1);
  const body = ipapiBody(
    pipeline.served().lookup,
    query ?? pipeline.clientAddress(),
    parseIpApiFields(request.query("fields")),
    langOf(request.query("lang"), pipeline),
  );
  return {
    status: 200,
    contentType: JSON_TYPE,
    body: JSON.stringify(body),
    headers: rateHeaders(decision),
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

export const IPAPI_ROUTES: readonly CompatRoute[] = [
  // `/json` and `/json/`: the caller.
  { method: "GET", path: "/json", error: ipapiError, handle: (r, p) => single(r, p, null) },
  { method: "GET", path: "/json/", error: ipapiError, handle: (r, p) => single(r, p, null) },
  {
    method: "GET",
    path: "/json/:ip{.+}",
    error: ipapiError,
    handle: (r, p) => single(r, p, r.params.ip!),
  },
  {
    method: "POST",
    path: "/batch",
    error: ipapiError,
    async handle(request, pipeline) {
      pipeline.authenticate(keyOf(request));
      // ip-api reads the body as JSON whatever its Content-Type (`curl -d` sends a form type).
      const body = await request.json(IPAPI_BATCH_MAX * 256, { anyContentType: true });
      const items = batchItems(body);
      if (items.length === 0 || items.length > IPAPI_BATCH_MAX) {
        throw new BadRequestError(
          `Batch of ${items.length} queries: give 1 to ${IPAPI_BATCH_MAX}, as ip-api allows`,
        );
      }
      const decision = await pipeline.charge(items.length);
      const { lookup } = pipeline.served();
      const fields = request.query("fields");
      const lang = request.query("lang");
      const answers = items.map((item) =>
        ipapiBody(
          lookup,
          item.query,
          parseIpApiFields(item.fields ?? fields),
          langOf(item.lang ?? lang, pipeline),
        )
      );
      return {
        status: 200,
        contentType: JSON_TYPE,
        body: JSON.stringify(answers),
        headers: rateHeaders(decision),
      };
    },
  },
];
