/**
 * What the compatible APIs (MaxMind GeoIP2, ipinfo, ip-api) get from the app,
 * and what they give back. No framework here: the app (src/service/http/app.ts)
 * registers each compatible route on Hono and hands it its request and the
 * app's own access, limit and lookup steps, so these routes share the native
 * API's keys, limits, data, metrics and logs, and only their request parsing
 * and rendering differ.
 */

import type { RateDecision } from "../access/rate_limiter.ts";
import type { AppError } from "../../base/errors.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import type { DataSet } from "../../data/sources/data_set.ts";

/** A compatible API's request, as the app parsed it. */
export interface CompatRequest {
  /** The route's path parameters (decoded). */
  params: Readonly<Record<string, string>>;
  /** A query parameter (the first, decoded), or undefined. */
  query(name: string): string | undefined;
  headers: Headers;
  /**
   * The JSON body, read as the native API reads one (415, 413 over `limit`
   * bytes, 400 malformed). With `anyContentType`, a body of any declared type
   * is read as JSON (ip-api's own examples post with curl's form default).
   */
  json(limit: number, options?: { anyContentType?: boolean }): Promise<unknown>;
}

/** The app's steps, in the order a route calls them. */
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

/** ipintel's own key headers, which every compatible API accepts too: `X-API-Key`. */
export function ownKeyHeader(headers: Headers): string | null {
  return headers.get("x-api-key")?.trim() ?? null;
}
