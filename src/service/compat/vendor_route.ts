/**
 * A compatible API's route (MaxMind GeoIP2, ipinfo, ip-api): declared like
 * every route (src/service/http/route.ts), served through the same rules,
 * keys, limits, data, metrics and logs; only its request reading and its
 * answer's shape are the vendor's, errors included.
 */

import type { RateDecision } from "../keys_limits/rate_limiter.ts";
import { AppError } from "../../base/errors.ts";
import { readJsonBody, requireJsonContentType } from "../http/body.ts";
import type { AppContext, Served } from "../http/env.ts";
import { answerPath } from "../http/answer_path.ts";
import { requestBody } from "../http/lookup_request.ts";
import type { PathItem, Route, RouteMethod, RouteTools } from "../http/route.ts";

/** A compatible API's answer, in its own shape. */
export interface VendorAnswer {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

/**
 * What declares a compatible route: a route whose steps (answerPath's, in its
 * order) answer in the vendor's shape: the caller by the API's own key, every
 * parameter read, `cost` units charged, then the answer from the data.
 */
export interface VendorRouteSpec<P> {
  path: string;
  method: RouteMethod;
  /** The API's label in metrics and logs (its family). */
  family: string;
  param?: Route["param"];
  empty?: boolean;
  doc: PathItem;
  /** The key the request carries in the API's own way (null: none). */
  key(c: AppContext): string | null;
  /** Every parameter, read and checked (a promise where a body is read). */
  read(c: AppContext, tools: RouteTools): P | Promise<P>;
  /** Units the answer costs. */
  cost(p: P): number;
  /** The answer, from the data set pinned for the request. */
  answer(c: AppContext, p: P, served: Served, tools: RouteTools): VendorAnswer;
  /** Renders an error in the API's own shape; null: an unexpected failure (500, logged). */
  error(error: AppError | null): VendorAnswer;
}

/**
 * The route of `spec`: its caller identified by the API's own credentials, its
 * steps in the one order of every lookup route (answerPath), its errors in its shape.
 */
export function vendorRoute<P>(spec: VendorRouteSpec<P>): Route {
  return {
    path: spec.path,
    methods: [spec.method],
    access: "own",
    family: spec.family,
    param: spec.param,
    empty: spec.empty,
    doc: spec.doc,
    handler: (tools) => {
      const answered = answerPath<P>(tools, {
        identify: (c) => authenticate(tools, c, spec.key(c)),
        read: (c) => spec.read(c, tools),
        cost: (p) => spec.cost(p),
        answer: (c, p, served) => vendorResponse(c, spec.answer(c, p, served, tools)),
      });
      return async (c) => {
        try {
          return await answered(c);
        } catch (error) {
          if (!(error instanceof AppError)) tools.logError(error, c);
          return vendorResponse(c, spec.error(error instanceof AppError ? error : null));
        }
      };
    },
  };
}

function vendorResponse(c: AppContext, answer: VendorAnswer): Response {
  const headers = { "content-type": answer.contentType, ...answer.headers };
  return c.body(answer.body, answer.status as 200, headers);
}

/** Identifies the caller by the key it sent (null: none); throws the 401 as the native API does. */
export function authenticate(tools: RouteTools, c: AppContext, key: string | null): void {
  c.set("caller", tools.admission.identify(c, key));
}

/** The rate decision of the request's charge (its RateLimit), null when unlimited. */
export function decisionOf(c: AppContext): RateDecision | null {
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
