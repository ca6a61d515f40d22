/**
 * ipinfo's API under the prefix `/ipinfo`, so that ipinfo's clients work with
 * their base URL set to `https://host:port/ipinfo`: `/{ip}` and `/{ip}/json`
 * (JSON), `/{ip}/{field}` (the value as plain text), the caller at `/`,
 * `/json` and `/{field}`, and `POST /batch` with a JSON array of such paths.
 * The key comes as `?token=`, `Authorization: Bearer`, or Basic's user name
 * (as ipinfo takes it), or ipintel's own X-API-Key / apiKey.
 */

import {
  type AppError,
  BadRequestError,
  InvalidIpError,
  NotFoundError,
  quoteInput,
  type RateLimitedError,
} from "../../base/errors.ts";
import { parseIp } from "../../base/ip/parse.ts";
import { reservedRangeName } from "../../base/ip/reserved.ts";
import { CONTENT_TYPES } from "../../core/format/render.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import { anonymizerFlags } from "../../data/risk/security.ts";
import type { Json } from "../../base/types.ts";
import type { AppContext } from "../http/env.ts";
import type { Route } from "../http/route.ts";
import { ownKeyHeader, readJson, type VendorAnswer, vendorRoute } from "./vendor_route.ts";
import { IPINFO_FIELDS } from "./fields.ts";
import { IPINFO_BATCH_DOC, IPINFO_FIELD_DOC, IPINFO_IP_DOC, IPINFO_ME_DOC } from "./openapi.ts";
import { basicCredentials, bearerToken } from "../keys_limits/credentials.ts";

const JSON_TYPE = CONTENT_TYPES.json;
const TEXT_TYPE = "text/plain; charset=utf-8";

const FIELD_SET: ReadonlySet<string> = new Set(IPINFO_FIELDS);

/** ipinfo's body for one address: unknown values are left out, as ipinfo leaves them out. */
export function ipinfoBody(lookup: Lookup, ipText: string): Record<string, Json> {
  let detail;
  try {
    detail = lookup.detail(ipText);
  } catch (error) {
    if (error instanceof NotFoundError) {
      // A reserved range is a bogon (ipinfo's answer); another address without data: just `ip`.
      return error.rangeName ? { ip: error.ip, bogon: true } : { ip: error.ip };
    }
    throw error;
  }
  const { result, signals } = detail;
  const g = result.geoLocation;
  const c = result.connection;
  const body: Record<string, Json> = { ip: result.ip };
  const put = (key: string, value: Json | undefined) => {
    if (value !== null && value !== undefined) body[key] = value;
  };
  put("city", g.city);
  put("region", g.region);
  put("country", g.countryCode);
  put("loc", g.latitude !== null && g.longitude !== null ? `${g.latitude},${g.longitude}` : null);
  put("org", c.asn_number !== null ? `AS${c.asn_number}${c.asn_org ? ` ${c.asn_org}` : ""}` : null);
  put("postal", g.postal_Code);
  put("timezone", result.timezone.time_zone);
  if (c.asn_number !== null) {
    const asn: Record<string, Json> = { asn: `AS${c.asn_number}` };
    if (c.asn_org) asn.name = c.asn_org;
    if (c.domain) asn.domain = c.domain;
    asn.route = detail.network;
    body.asn = asn;
  }
  // Only when some security source is installed: without one, nothing is known.
  if (Object.values(signals).some((value) => value !== null)) {
    const flags = anonymizerFlags(signals);
    body.privacy = {
      vpn: flags.vpn,
      proxy: false,
      tor: flags.tor,
      relay: flags.relay,
      hosting: flags.hosting,
      service: "",
    };
  }
  if (reservedRangeName(parseIp(result.ip))) body.bogon = true;
  return body;
}

/** ipinfo's error body: `{status, error: {title, message}}`. */
export function ipinfoError(error: AppError | null): VendorAnswer {
  const answer = (
    status: number,
    title: string,
    message: string,
    headers?: Record<string, string>,
  ) => ({
    status,
    contentType: JSON_TYPE,
    body: JSON.stringify({ status, error: { title, message } }),
    headers,
  });
  if (error === null) return answer(500, "Internal error", "Internal server error");
  switch (error.code) {
    case "invalid_ip":
      return answer(404, "Wrong ip", error.message);
    case "unauthorized":
      return answer(
        403,
        "Unknown token",
        "Invalid or missing token: send the ipintel API key as ?token= or Authorization: Bearer",
      );
    case "rate_limited":
      return answer(429, "Rate limit exceeded", error.message, {
        "retry-after": String((error as RateLimitedError).retryAfterSeconds),
      });
    case "data_unavailable":
      return answer(503, "Service unavailable", error.message);
    case "payload_too_large":
      return answer(413, "Request too large", error.message);
    case "unsupported_media_type":
      return answer(415, "Unsupported media type", error.message);
    default:
      return answer(400, "Bad request", error.message);
  }
}

/** The key an ipinfo client sends. */
function keyOf(c: AppContext): string | null {
  const headers = c.req.raw.headers;
  return c.req.query("token") ?? bearerToken(headers.get("authorization")) ??
    (basicCredentials(headers)?.user || null) ?? ownKeyHeader(headers) ??
    c.req.query("apiKey") ?? null;
}

/** A field ipinfo answers, `json`, or none; a 400 naming the field otherwise. */
function checkField(field: string | null): void {
  if (field !== null && field !== "json" && !FIELD_SET.has(field)) {
    throw new BadRequestError(
      `Unknown field ${quoteInput(field)}: ipintel answers ${IPINFO_FIELDS.join(", ")} or json`,
    );
  }
}

/** One path's answer value: the body, or one field of it (undefined: the field is unknown). */
function answerPath(lookup: Lookup, ip: string, field: string | null): Json | undefined {
  checkField(field);
  const body = ipinfoBody(lookup, ip);
  return field === null || field === "json" ? body : body[field];
}

/** The answer of `/{ip}/{field}` or `/{ip}` (field null). */
function single(value: Json | undefined, field: string | null): VendorAnswer {
  if (field === null || field === "json" || (typeof value === "object" && value !== null)) {
    return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(value) };
  }
  // ipinfo answers a plain field as text, "undefined" when it has no value.
  return { status: 200, contentType: TEXT_TYPE, body: `${value ?? "undefined"}\n` };
}

function getRoute(
  path: string,
  doc: Route["doc"],
  resolve: (c: AppContext) => [string | null, string | null],
  match: Pick<Route, "param" | "empty"> = {},
): Route {
  return vendorRoute({
    method: "GET",
    path,
    family: IPINFO_FAMILY,
    ...match,
    doc,
    error: ipinfoError,
    key: keyOf,
    read: (c, tools) => {
      const [ip, field] = resolve(c);
      checkField(field);
      return { ip: ip ?? tools.client(c), field };
    },
    cost: () => 1,
    answer: (_, { ip, field }, served) => single(answerPath(served.lookup, ip, field), field),
  });
}

/** ipinfo's label in metrics and logs: every path of its API. */
const IPINFO_FAMILY = "/ipinfo/{path}";

/** `/{x}`: a field of the caller (`/city`, `/json`), else an address. */
const oneSegment = (c: AppContext): [string | null, string | null] => {
  const x = c.req.param("ip")!;
  return x === "json" || FIELD_SET.has(x) ? [null, x] : [x, null];
};

export const IPINFO_ROUTES: readonly Route[] = [
  getRoute("/ipinfo", IPINFO_ME_DOC, () => [null, null], { empty: true }),
  getRoute("/ipinfo/{ip}", IPINFO_IP_DOC, oneSegment, { param: "segment", empty: false }),
  getRoute(
    "/ipinfo/{ip}/{field}",
    IPINFO_FIELD_DOC,
    (c) => [c.req.param("ip")!, c.req.param("field")!],
    { param: "segment", empty: false },
  ),
  vendorRoute({
    method: "POST",
    path: "/ipinfo/batch",
    family: IPINFO_FAMILY,
    doc: IPINFO_BATCH_DOC,
    error: ipinfoError,
    key: keyOf,
    async read(c, tools) {
      const paths = await readJson(c, 1024 + tools.bulkMax * 80);
      if (!Array.isArray(paths) || paths.some((p) => typeof p !== "string")) {
        throw new BadRequestError(
          'Invalid JSON body: expected an array of paths ["8.8.8.8", "8.8.8.8/city", ...]',
        );
      }
      if (paths.length === 0 || paths.length > tools.bulkMax) {
        throw new BadRequestError(
          `Batch of ${paths.length} paths: give 1 to ${tools.bulkMax} (IPINTEL_BULK_MAX)`,
        );
      }
      return paths as string[];
    },
    cost: (paths) => paths.length,
    answer(c, paths, served) {
      const lookup = served.lookup;
      const filter = c.req.query("filter") === "1";
      const out: Record<string, Json> = {};
      for (const path of paths) {
        const [ip = "", field = null, extra] = path.replace(/^\//, "").split("/");
        try {
          if (extra !== undefined) throw new BadRequestError(`Invalid path ${quoteInput(path)}`);
          const value = answerPath(lookup, ip, field);
          if (value === undefined) {
            if (!filter) out[path] = "undefined";
          } else out[path] = value;
        } catch (error) {
          if (!(error instanceof InvalidIpError) && !(error instanceof BadRequestError)) {
            throw error;
          }
          if (!filter) out[path] = { error: { title: "Wrong ip", message: error.message } };
        }
      }
      return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(out) };
    },
  }),
];

export { IPINFO_FIELDS };
