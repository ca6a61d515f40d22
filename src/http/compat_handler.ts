/**
 * The route-table handler of the compatible APIs (src/compat: MaxMind GeoIP2,
 * ipinfo, ip-api): the request as those APIs read it, over this pipeline's own
 * admission (keys and limits), data and client address. The pipeline around it
 * adds the RateLimit and CORS headers, counts and logs as for any route.
 */

import type { Caller } from "../access/access.ts";
import type { CompatAnswer, CompatPipeline, CompatRequest } from "../compat/pipeline.ts";
import { matchCompatRoute } from "../compat/routes.ts";
import { AppError, quoteInput } from "../errors.ts";
import type { Lookup } from "../lookup/lookup.ts";
import type { DataSet } from "../sources/data_set.ts";
import type { Admission } from "./admission.ts";
import { readJsonBody, requireJsonContentType } from "./body.ts";
import { requestBody } from "./lookup_request.ts";
import type { ApiRequest, Handler } from "./pipeline.ts";

export interface CompatDeps {
  admission: Admission;
  /** The caller's address, as `/me` resolves it. */
  client: (request: ApiRequest) => string;
  /** The served data; throws DataUnavailableError while loading. */
  served: () => { lookup: Lookup; data: DataSet };
  bulkMax: number;
  logError: (error: unknown, request: Request) => void;
}

/**
 * The handler of one route-table entry (`/ipinfo/{path}`, `/batch`, …): the
 * compatible route of that family serving the request's full path answers.
 */
export function compatHandler(tablePath: string, deps: CompatDeps): Handler {
  const brace = tablePath.indexOf("{");
  // `/json` and `/json/` are the same request (the caller): the prefix without its slash.
  const bare = brace === -1 ? tablePath : tablePath.slice(0, brace).replace(/\/$/, "");
  const prefix = brace === -1 ? tablePath : tablePath.slice(0, brace);
  return async (request) => {
    const path = brace === -1 || request.param === "" ? bare : prefix + request.param;
    const found = matchCompatRoute(request.method, path);
    if (!found) {
      throw new AppError(
        "not_found",
        `No route for ${request.method} ${quoteInput(path)}: see /openapi.json`,
      );
    }
    let caller: Caller | null = null;
    const pipeline: CompatPipeline = {
      authenticate: (key) => {
        caller = deps.admission.identifyKey(request, key);
      },
      charge: async (cost) => {
        await deps.admission.charge(request, caller, cost);
        return request.rate;
      },
      served: deps.served,
      clientAddress: () => deps.client(request),
      bulkMax: deps.bulkMax,
    };
    const compatRequest: CompatRequest = {
      params: found.params,
      query: (name) => request.query(name),
      headers: request.headers,
      json: (limit) => {
        requireJsonContentType(request.headers);
        return readJsonBody(requestBody(request), limit);
      },
    };
    let answer: CompatAnswer;
    try {
      answer = await found.route.handle(compatRequest, pipeline);
    } catch (error) {
      if (!(error instanceof AppError)) deps.logError(error, request.raw);
      answer = found.route.error(error instanceof AppError ? error : null);
    }
    return {
      status: answer.status,
      headers: { "content-type": answer.contentType, ...answer.headers },
      body: answer.body,
    };
  };
}
