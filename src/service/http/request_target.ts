/**
 * The request as the client sent it: method, Host and request target.
 *
 * Deno.serve builds `request.url` by concatenating "http://", the Host header
 * and the target, unchecked: `Host: x/ip/1.1.1.1?` turns `GET /health` into
 * `http://x/ip/1.1.1.1?/health`, which a router reads as `/ip/1.1.1.1`. So the
 * Host header is validated before anything routes or reads the query, and the
 * target is recovered from the URL without trusting the Host part.
 */

import {
  AppError,
  BadRequestError,
  MethodNotAllowedError,
  quoteInput,
  STATUS_BY_CODE,
} from "../../base/errors.ts";
import { type OutputFormat, parseFormat, renderError } from "../../core/format/mod.ts";

// RFC 9110 7.2 Host = uri-host [":" port], narrowed to what a client of this
// API sends: a DNS name or IPv4 address, or a bracketed IPv6 literal.
// Percent-encoding, userinfo (`@`), spaces and delimiters are refused.
const HOST = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

/** True for a missing Host (HTTP/1.0, in-process requests) or a well-formed one. */
function isValidHost(host: string | null): boolean {
  if (host === null || host === "") return true;
  const match = HOST.exec(host);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}

/**
 * The request target (path and query) as sent. The URL is
 * `scheme://authority target`; when the authority is the Host header, it is cut
 * off by its known length, so a `/` or `?` inside a forged Host cannot move
 * the path. Otherwise (absolute-form targets, in-process requests) the
 * authority was parsed and holds no `/`.
 *
 * @example requestTarget(new Request("http://localhost/ip/1.1.1.1?format=xml")) // "/ip/1.1.1.1?format=xml"
 */
export function requestTarget(
  request: Request,
  host: string | null = request.headers.get("host"),
): string {
  const url = request.url;
  const scheme = url.indexOf("://");
  if (scheme === -1) return url; // `*` (OPTIONS *) or another non-URL target
  const authorityStart = scheme + 3;
  if (host && url.startsWith(host, authorityStart)) {
    const rest = url.slice(authorityStart + host.length);
    if (rest.startsWith("/")) return rest;
  }
  const slash = url.indexOf("/", authorityStart);
  return slash === -1 ? "/" : url.slice(slash);
}

/**
 * The path of a request as sent (still percent-encoded; no query, no
 * fragment): what the app routes on (Hono's `getPath`), so that a forged Host
 * cannot move it.
 */
export function requestPath(request: Request): string {
  const target = requestTarget(request);
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** The `format` a target asks for (errors are rendered in it), read from the target itself. */
export function targetFormat(target: string): OutputFormat {
  const query = target.indexOf("?");
  if (query === -1) return "json";
  try {
    return parseFormat(new URLSearchParams(target.slice(query + 1)).get("format"));
  } catch {
    return "json";
  }
}

/**
 * Longest request target (path and query) the app answers: 32 KiB, room for
 * a `/bulk/` list of over 800 IPv6 addresses. Longer ones get the 414
 * envelope, up to what each server reads at all (docs/api.md, "Request
 * size"): over HTTP/1.1, Deno.serve (hyper) refuses a request head of about
 * 64 KiB with a bare 400 before the app sees it, and the node:http server
 * answers the envelope itself (node_server.ts); over HTTP/2, Deno.serve
 * answers a header list over 16 KiB with a bare 431 (no setting changes it).
 */
export const MAX_TARGET_LENGTH = 32_768;

/** What is wrong with a request before any route sees it (see {@link createRequestCheck}), or null. */
export type RequestCheck = (host: string | null, target: string) => AppError | null;

/**
 * The check of a request before any route sees it: a target over
 * {@link MAX_TARGET_LENGTH} (414), a malformed Host header (400) or a target
 * that is not a path (400). The app's first rule (rules/host_check.ts) and
 * the node:http server make one each. A method is judged by the route the path
 * names (404 for no route, else 405 with that route's `Allow`). It remembers
 * the last Host it found valid: a server sees the same few over and over.
 */
export function createRequestCheck(): RequestCheck {
  let lastValidHost = "";
  return (host, target) => {
    if (target.length > MAX_TARGET_LENGTH) {
      return new AppError(
        "uri_too_long",
        `Request target of ${target.length} bytes is longer than the limit of ${MAX_TARGET_LENGTH}: POST /bulk takes any number of addresses`,
      );
    }
    if (host !== lastValidHost) {
      if (!isValidHost(host)) {
        return new BadRequestError(
          `Invalid Host header ${
            quoteInput(host!)
          }: expected a host name or address and an optional port`,
        );
      }
      if (host) lastValidHost = host;
    }
    if (!target.startsWith("/")) {
      return new BadRequestError(`Invalid request target ${quoteInput(target)}: expected a path`);
    }
    return null;
  };
}

/** The error envelope for a request refused before routing, in the format its target asks for. */
export function rejectionResponse(error: AppError, target: string): Response {
  const rendered = renderError(error.message, targetFormat(target));
  const headers: Record<string, string> = { "content-type": rendered.contentType };
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(", ");
  return new Response(rendered.body, { status: STATUS_BY_CODE[error.code], headers });
}
