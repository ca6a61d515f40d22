/**
 * A compatible API's route (MaxMind GeoIP2, ipinfo, ip-api): declared like
 * every route (src/service/http/route.ts), served through the same rules,
 * keys, limits, data, metrics and logs; only its request reading and its
 * answer's shape are the vendor's, errors included.
 */

import type { RateDecision } from "../access/rate_limiter.ts";
import { AppError } from "../../base/errors.ts";
import { readJsonBody, requireJsonContentType } from "../http/body.ts";
import type { AppContext } from "../http/env.ts";
import { requestBody } from "../http/lookup_request.ts";
import type { PathItem, Route, RouteMethod, RouteTools } from "../http/route.ts";

/** A compatible API's answer, in its own shape. */
export interface VendorAnswer {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

/** What declares a compatible route: a route whose handler answers in the vendor's shape. */
export interface VendorRouteSpec {
  path: string;
  method: RouteMethod;
  /** The API's label in metrics and logs (its family). */
  family: string;
  param?: Route["param"];
  empty?: boolean;
  doc: PathItem;
  handle(c: AppContext, tools: RouteTools): Promise<VendorAnswer>;
  /** Renders an error in the API's own shape; null: an unexpected failure (500, logged). */
  error(error: AppError | null): VendorAnswer;
}

/** The route of `spec`: its caller identified by the API's own credentials, its errors in its shape. */
export function vendorRoute(spec: VendorRouteSpec): Route {
  return {
    path: spec.path,
    methods: [spec.method],
    access: "own",
    family: spec.family,
    param: spec.param,
    empty: spec.empty,
    doc: spec.doc,
    handler: (tools) => async (c) => {
      let answer: VendorAnswer;
      try {
        answer = await spec.handle(c, tools);
      } catch (error) {
        if (!(error instanceof AppError)) tools.logError(error, c);
        answer = spec.error(error instanceof AppError ? error : null);
      }
      const headers = { "content-type": answer.contentType, ...answer.headers };
      return c.body(answer.body, answer.status as 200, headers);
    },
  };
}

/** Identifies the caller by the key it sent (null: none); throws the 401 as the native API does. */
export function authenticate(tools: RouteTools, c: AppContext, key: string | null): void {
  c.set("caller", tools.admission.identify(c, key));
}

/** Charges `cost` units to the caller (throws the 429); the decision, null when unlimited. */
export async function charge(
  tools: RouteTools,
  c: AppContext,
  cost: number,
): Promise<RateDecision | null> {
  const refusal = await tools.admission.charge(c, c.get("caller") ?? null, cost);
  if (refusal) throw refusal;
  return c.get("rate") ?? null;
}

/**
 * The JSON body, read as the native API reads one (415, 413 over `limit`
 * bytes, 400 malformed). With `anyContentType`, a body of any declared type
 * is read as JSON (ip-api's own examples post with curl's form default).
 */
export function readJson(
  c: AppContext,
  limit: number,
  options?: { anyContentType?: boolean },
): Promise<unknown> {
  if (!options?.anyContentType) requireJsonContentType(c.req.raw.headers);
  return readJsonBody(requestBody(c), limit);
}

/** ipintel's own key headers, which every compatible API accepts too: `X-API-Key`. */
export function ownKeyHeader(headers: Headers): string | null {
  return headers.get("x-api-key")?.trim() ?? null;
}
