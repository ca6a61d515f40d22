/**
 * What the compatible APIs (MaxMind GeoIP2, ipinfo, ip-api) get from the
 * request pipeline, and what they give back. No framework here: the app hands
 * each compatible route its request and the pipeline's own access, limit and
 * lookup steps, so these routes share the native API's keys, limits, data,
 * metrics and logs, and only their request parsing and rendering differ.
 */

import type { RateDecision } from "../access/rate_limiter.ts";
import type { AppError } from "../errors.ts";
import type { Lookup } from "../lookup/lookup.ts";
import type { DataSet } from "../sources/data_set.ts";

/** A compatible API's request, as the pipeline parsed it. */
export interface CompatRequest {
  /** The route's path parameters (decoded). */
  params: Readonly<Record<string, string>>;
  /** A query parameter (the first, decoded), or undefined. */
  query(name: string): string | undefined;
  headers: Headers;
  /** The JSON body, read as the native API reads one (415, 413 over `limit` bytes, 400 malformed). */
  json(limit: number): Promise<unknown>;
}

/** The pipeline's steps, in the order a route calls them. */
export interface CompatPipeline {
  /** Identifies the caller by the key it sent (null: none); throws UnauthorizedError as the native API does. */
  authenticate(key: string | null): void;
  /** Charges `cost` units to the caller (RateLimitedError when they do not fit); the decision, null when unlimited. */
  charge(cost: number): Promise<RateDecision | null>;
  /** The served data and its lookup; throws DataUnavailableError while loading. */
  served(): { lookup: Lookup; data: DataSet };
  /** The caller's address, as `/me` resolves it (trusted proxies applied). */
  clientAddress(): string;
  /** Most addresses in one batch (IPINTEL_BULK_MAX). */
  bulkMax: number;
}

/** A compatible API's answer. */
export interface CompatAnswer {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

/** One route of a compatible API. */
export interface CompatRoute {
  method: "GET" | "POST";
  /** The path pattern (Hono's syntax: `:name`, `:name{regex}`). */
  path: string;
  handle(request: CompatRequest, pipeline: CompatPipeline): Promise<CompatAnswer>;
  /** Renders an error in the API's own shape; null: an unexpected failure (500, logged by the app). */
  error(error: AppError | null): CompatAnswer;
}

/** The credentials of `Authorization: Basic base64(user:password)`, or null. */
export function basicCredentials(headers: Headers): { user: string; password: string } | null {
  const match = /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(headers.get("authorization") ?? "");
  if (!match) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true })
      .decode(Uint8Array.from(atob(match[1]!), (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
  const colon = text.indexOf(":");
  return colon === -1
    ? { user: text, password: "" }
    : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(headers: Headers): string | null {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match ? match[1]! : null;
}

/** ipintel's own key headers, which every compatible API accepts too: `X-API-Key`. */
export function ownKeyHeader(headers: Headers): string | null {
  return headers.get("x-api-key")?.trim() ?? null;
}
