/**
 * Every error answer of the app, in the format the request asks for: the
 * app's `onError` and `notFound`, a 405 with the route's `Allow`, and the 400
 * of a malformed Host. 5xx details are logged (with the request id), never
 * sent.
 */

import {
  AppError,
  MethodNotAllowedError,
  quoteInput,
  RateLimitedError,
  STATUS_BY_CODE,
  UnauthorizedError,
} from "../../base/errors.ts";
import { BEARER_CHALLENGE } from "../keys_limits/credentials.ts";
import { renderError } from "../../core/format/render.ts";
import type { AppContext, ErrorLog } from "./env.ts";

export type { ErrorLog };
import { requestTarget, targetFormat } from "./request_target.ts";
import { allowedMethods, type RouteMethod } from "./route.ts";

/** The answer to `error`: its status and message, 500 (logged, generic) when unexpected. */
export function errorResponse(c: AppContext, error: unknown, logError: ErrorLog): Response {
  const status = error instanceof AppError ? STATUS_BY_CODE[error.code] : 500;
  if (status === 500) logError(error, c);
  const message = error instanceof AppError ? error.message : "Internal server error";
  // The format is read from the target as sent, which a forged Host cannot move.
  const rendered = renderError(message, targetFormat(requestTarget(c.req.raw)));
  const headers: Record<string, string> = { "content-type": rendered.contentType };
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(", ");
  if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  // RFC 9110: a 401 names its scheme (else the MCP Inspector takes it for an OAuth prompt).
  if (error instanceof UnauthorizedError) headers["www-authenticate"] = BEARER_CHALLENGE;
  return c.body(rendered.body, status as 400, headers);
}

/** The 404 of a path no route serves. */
export function noRoute(c: AppContext): AppError {
  return new AppError(
    "not_found",
    `No route for ${c.req.method} ${quoteInput(c.req.path)}: see /openapi.json`,
  );
}

/**
 * The error of a request a route's handlers did not take: 405 for a method the
 * route does not serve (HEAD is judged as GET), else 404 (a compatible API's
 * family holds no route for the path).
 */
export function unservedMethod(
  c: AppContext,
  family: string,
  methods: readonly RouteMethod[],
): AppError {
  const method = c.req.method === "HEAD" ? "GET" : c.req.method;
  if (!(methods as readonly string[]).includes(method)) {
    const allow = allowedMethods(methods);
    return new MethodNotAllowedError(
      `Method ${quoteInput(method)} is not allowed on ${family}: use ${allow.join(", ")}`,
      allow,
    );
  }
  return noRoute(c);
}
