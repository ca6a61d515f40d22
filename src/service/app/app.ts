/**
 * `createApp(deps)`: the Hono app. Every route is declared once
 * (src/service/http/route.ts; the native API's in routes.ts, the compatible
 * APIs' in src/service/compat) and registered here with one handler. Every
 * answer passes the same rules, made by factories at start-up, in this
 * order: the instrumentation (metrics, access log, requests in flight, the
 * request id), the data set pinned and X-Data-Version, CORS, RateLimit
 * headers, HEAD, the Host check; then, on a keyed route, the key; then the
 * handler. A handler's error is answered in the format the request asks for;
 * `notFound` answers the 404s, and the 405s of a known path (with its `Allow`).
 *
 * Adding a rule: write a factory in src/service/http/rules/ returning an
 * `AnswerRule` (`before`: the error to answer instead, or null; `after`: a
 * decoration of the answer, errors included), made once at start-up, and put
 * it in `rules` below at its place in the order. Never `app.use`: a middleware
 * registered there runs outside the rules (before the instrumentation's clock
 * and request id, around no error answer of the rules, undecorated), and puts
 * every request through Hono's composition, making a synchronous answer a
 * promise (docs/design.md, "HTTP layer"). tests/service/http/rules_test.ts
 * holds src/ free of middleware registrations.
 */

import { Hono } from "hono";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { DEFAULT_STREAM_IDLE_TIMEOUT } from "../../base/config.ts";
import { DataUnavailableError, UnauthorizedError } from "../../base/errors.ts";
import { createSite } from "../web/site.ts";
import { createAsnView } from "../../core/asn/view.ts";
import { createAdmission } from "../http/admission.ts";
import { clientOf, createClientAddressResolver } from "../http/client_address.ts";
import type { AppContext, AppEnv } from "../http/env.ts";
import { type ErrorLog, errorResponse, noRoute, unservedMethod } from "../http/error_response.ts";
import { corsHeaders, preflight } from "../http/rules/cors.ts";
import { pinDataSet } from "../http/rules/data_version.ts";
import { headAnswer } from "../http/rules/head.ts";
import { hostCheck } from "../http/rules/host_check.ts";
import { rateLimitHeaders } from "../http/rules/rate_headers.ts";
import { applyAnswerRules } from "../http/rules/rules.ts";
import { requestPath } from "../http/request_target.ts";
import {
  familyMethods,
  familyOf,
  familyPattern,
  type Handler,
  handlerPatterns,
  type Route,
  routeLabels,
} from "../http/route.ts";
import { COMPAT_ROUTES } from "../compat/routes.ts";
import type { AppDeps, AppTools } from "./app_tools.ts";
import { NATIVE_ROUTES } from "./routes.ts";

export type { AppDeps, AppTools };
export type App = Hono<AppEnv>;

/** Every route the app serves, in the order of `/openapi.json` and of the metric labels. */
export const ROUTES: readonly Route<AppTools>[] = [...NATIVE_ROUTES, ...COMPAT_ROUTES];

/** The route labels of metrics and access logs (see routeLabels). */
export const ROUTE_LABELS: readonly string[] = routeLabels(ROUTES);

/** Builds the app; bad configuration (e.g. a trusted-proxy CIDR) throws here, at start-up. */
export function createApp(deps: AppDeps): App {
  const { config } = deps;
  const routes = deps.routes ?? ROUTES;
  const resolveClient = deps.clientAddress ?? createClientAddressResolver(config);
  const client = (c: AppContext) => clientOf(c, resolveClient);
  const admission = createAdmission(deps.access, client);
  const log = deps.logError ?? ((error: unknown) => console.error(error));
  const logError: ErrorLog = (error, c) => log(error, deps.instrumentation?.requestId?.(c));
  const tools: AppTools = {
    admission,
    client,
    served: (c) => {
      const served = c.get("served");
      if (!served) throw new DataUnavailableError(LOADING_MESSAGE);
      return served;
    },
    bulkMax: config.bulkMax,
    logError,
    deps,
    routes,
    answerCache: deps.answerCache?.enabled ? deps.answerCache : null,
    // The ASN index of each data set, built on its first question (src/core/asn/view.ts).
    asnView: createAsnView(),
    site: config.web === false ? null : createSite({ bulkMax: config.bulkMax }),
    streamDeps: (c) => ({
      lookup: tools.served(c).lookup,
      // The key is checked again at every batch: a revoked, rotated or re-limited key
      // ends a running stream with its final record, as it refuses new requests.
      charge: (units) => {
        const caller = admission.recheck(c);
        if (caller instanceof UnauthorizedError) return Promise.resolve(caller);
        return Promise.resolve(admission.charge(c, caller, units));
      },
      remaining: () => c.get("rate")?.remaining ?? null,
      idleTimeoutMs: (config.streamIdleTimeout ?? DEFAULT_STREAM_IDLE_TIMEOUT) * 1000,
      logError: (error) => logError(error, c),
    }),
  };

  // Routing on the path as sent (requestPath): a forged Host cannot move it.
  const app = new Hono<AppEnv>({ router: new RegExpRouter(), getPath: requestPath });
  // The rules of every answer, around every handler, outermost first: a refused Host and a
  // handler's error are answered and decorated like any answer. A new rule goes here (see the
  // module's doc), never in an `app.use`.
  const rules = [
    ...(deps.instrumentation ? [deps.instrumentation.rule] : []),
    pinDataSet(deps.slot),
    corsHeaders(config.corsOrigins),
    rateLimitHeaders(),
    headAnswer(),
    hostCheck(),
  ];
  const answered = applyAnswerRules(rules, (c, error) => errorResponse(c, error, logError));
  app.onError((error, c) => errorResponse(c, error, logError));

  const labels = routeLabels(routes);
  /** The handler of label `index`: the request carries its label, for metrics and the log. */
  const labelled = (index: number, handler: Handler): Handler => {
    const wrapped = answered(handler);
    return (c) => {
      c.set("route", index);
      return wrapped(c);
    };
  };
  // The native API's key, read before the handler on the routes that take one.
  const keyed = (handler: Handler): Handler => (c) => {
    c.set("caller", admission.identifyByKey(c));
    return handler(c);
  };
  // Exact routes first: where `/bulk/*` also covers `/bulk`, the exact route's family answers.
  const families = labels.slice(0, -1);
  const ordered = [...families.keys()].sort((a, b) =>
    Number(families[a]!.includes("{")) - Number(families[b]!.includes("{"))
  );
  // Each family's paths, for the answer to a request no handler takes (405 or 404).
  const fallback = new RegExpRouter<number>();
  for (const index of ordered) {
    const family = families[index]!;
    for (const route of routes) {
      if (familyOf(route) !== family) continue;
      const handler = route.handler(tools);
      app.on(
        [...route.methods],
        handlerPatterns(route, routes),
        labelled(index, route.access === "key" ? keyed(handler) : handler),
      );
    }
    app.options(familyPattern(family), labelled(index, preflight(familyMethods(routes, family))));
    fallback.add("ALL", familyPattern(family), index);
  }
  // No handler took the request: a 405 on a known path (HEAD judged as GET), else a 404.
  app.notFound(answered((c) => {
    const [matched] = fallback.match(c.req.method, c.req.path);
    const index = ordered.find((i) => matched.some(([family]) => family === i));
    if (index === undefined) throw noRoute(c);
    c.set("route", index); // its label in metrics and the access log
    const family = families[index]!;
    throw unservedMethod(c, family, familyMethods(routes, family));
  }));
  return app;
}

const LOADING_MESSAGE = "Data is not loaded yet: try again shortly";
