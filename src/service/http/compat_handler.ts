/**
 * The Hono handler of one compatible route (src/service/compat: MaxMind GeoIP2,
 * ipinfo, ip-api): the request as those APIs read it, over the app's own
 * admission (keys and limits), data and client address. The app's middleware
 * adds the RateLimit and CORS headers, counts and logs as for any route.
 */

import type { AnswerHandler } from "./rules/rules.ts";
import type { Caller } from "../access/access.ts";
import type { CompatPipeline, CompatRequest, CompatRoute } from "../compat/pipeline.ts";
import { AppError } from "../../base/errors.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import type { Admission } from "./admission.ts";
import { readJsonBody, requireJsonContentType } from "./body.ts";
import type { AppContext } from "./env.ts";
import type { ErrorLog } from "./error_response.ts";
import { requestBody } from "./lookup_request.ts";

export interface CompatDeps {
  admission: Admission;
  /** The caller's address, as `/me` resolves it. */
  client: (c: AppContext) => string;
  /** The data set pinned for the request; throws DataUnavailableError while loading. */
  served: (c: AppContext) => { lookup: Lookup; data: DataSet };
  bulkMax: number;
  logError: ErrorLog;
}

/** The handler of `route`; its errors are answered in the route's own shape. */
export function compatHandler(route: CompatRoute, deps: CompatDeps): AnswerHandler {
  return async (c) => {
    let caller: Caller | null = null;
    const pipeline: CompatPipeline = {
      authenticate: (key) => {
        caller = deps.admission.identify(c, key);
      },
      charge: async (cost) => {
        const refusal = await deps.admission.charge(c, caller, cost);
        if (refusal) throw refusal;
        return c.get("rate") ?? null;
      },
      served: () => deps.served(c),
      clientAddress: () => deps.client(c),
      bulkMax: deps.bulkMax,
    };
    const request: CompatRequest = {
      params: c.req.param() as Record<string, string>,
      query: (name) => c.req.query(name),
      headers: c.req.raw.headers,
      json: (limit, options) => {
        if (!options?.anyContentType) requireJsonContentType(c.req.raw.headers);
        return readJsonBody(requestBody(c), limit);
      },
    };
    let answer;
    try {
      answer = await route.handle(request, pipeline);
    } catch (error) {
      if (!(error instanceof AppError)) deps.logError(error, c);
      answer = route.error(error instanceof AppError ? error : null);
    }
    const headers = { "content-type": answer.contentType, ...answer.headers };
    return c.body(answer.body, answer.status as 200, headers);
  };
}
