/** Reads what every lookup route accepts: format, get, lang and the user agent. */

import { BadRequestError } from "../../base/errors.ts";
import {
  type FieldSelection,
  type OutputFormat,
  parseFieldSelection,
  parseFormat,
} from "../../core/format/mod.ts";
import {
  type BodySource,
  declaresJsonBody,
  isJsonObject,
  readJsonBody,
  requireJsonContentType,
} from "./body.ts";
import { type AppContext, bodyStream } from "./env.ts";
import { parseAt } from "../../data/history/at.ts";
import { createLanguageResolver } from "../../core/lookup/lookup.ts";
import type { DataSet } from "../../data/sources/data_set.ts";

/** Largest accepted user-agent body (docs/decisions.md, "Errors": 413). */
export const UA_BODY_LIMIT = 8 * 1024;

export interface LookupRequest {
  format: OutputFormat;
  selection: FieldSelection | null;
  lang: string | null;
  userAgent: string | null;
  /** `at`: answer the security lists as they stood then (src/data/history); null: now. */
  at: Date | null;
}

/** A lookup request without a query: the defaults of every parameter. */
const NO_QUERY: LookupRequest = Object.freeze({
  format: "json",
  selection: null,
  lang: null,
  userAgent: null,
  at: null,
});

/**
 * The query part of a lookup request: format, get (400 on an unknown name),
 * lang (400 when the served data set's City database cannot answer in it,
 * whatever the addresses: a list whose every item fails is refused too), and
 * the user agent from `ua` or the header.
 */
export function readLookupQuery(c: AppContext): LookupRequest {
  const userAgent = c.req.raw.headers.get("user-agent");
  // Most lookups have no query at all: each parameter read would scan the URL for one.
  if (!c.req.url.includes("?")) return { ...NO_QUERY, userAgent };
  const lang = c.req.query("lang") ?? null;
  if (lang) checkLang(lang, c.get("served")?.data ?? null);
  return {
    format: parseFormat(c.req.query("format")),
    selection: parseFieldSelection(c.req.query("get")),
    lang,
    userAgent: c.req.query("ua") ?? userAgent,
    at: parseAt(c.req.query("at")),
  };
}

/** Each data set's `lang` check, made on its first `lang` (weak: it goes with the set). */
const langCheckers = new WeakMap<DataSet, (lang: string) => string>();

/**
 * Refuses a `lang` the lookup would refuse (src/core/lookup/lookup.ts, the same
 * resolver over the same languages), before an address is looked up or a unit
 * charged (the MCP tools' `lang` too). Without data (still loading) the 503 comes first.
 *
 * @throws {BadRequestError} naming the value.
 */
export function checkLang(lang: string, data: DataSet | null): void {
  if (!data) return;
  let check = langCheckers.get(data);
  if (!check) {
    const languages = data.city?.metadata.languages.length ? data.city.metadata.languages : ["en"];
    langCheckers.set(data, check = createLanguageResolver(languages));
  }
  check(lang);
}

/**
 * The parsed lookup request. The user agent comes from a JSON body
 * `{"userAgent": "..."}` (a POST, which must be application/json, or a GET
 * with `Content-Type: application/json`), else the `ua` parameter, else the
 * request's own `User-Agent` header.
 */
export function readLookupRequest(c: AppContext): LookupRequest | Promise<LookupRequest> {
  const query = readLookupQuery(c);
  const headers = c.req.raw.headers;
  const post = c.req.method === "POST";
  // Without a body the request is read at once: no promise for the common GET.
  if (!post && !declaresJsonBody(headers)) return query;
  if (post) requireJsonContentType(headers);
  return readJsonBody(requestBody(c), UA_BODY_LIMIT).then((body) => ({
    ...query,
    userAgent: userAgentFromBody(body) ?? query.userAgent,
  }));
}

/** `{"userAgent": "..."}` → the string; an object without it → null; anything else → 400. */
export function userAgentFromBody(body: unknown): string | null {
  if (!isJsonObject(body)) {
    throw new BadRequestError('Invalid JSON body: expected an object like {"userAgent": "..."}');
  }
  const value = body.userAgent;
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new BadRequestError(
      `Invalid JSON body: "userAgent" must be a string, got ${typeof value}`,
    );
  }
  return value;
}

/**
 * The request body: the Fetch body, or the GET body the node:http server hands
 * over. Deno.serve drops GET bodies (as the Fetch standard does); a client that
 * sent one gets a 400 saying how to send it instead, rather than an answer
 * silently computed from another user agent.
 */
export function requestBody(c: AppContext): BodySource {
  const stream = bodyStream(c);
  if (!stream && c.req.method !== "POST") {
    throw new BadRequestError(
      "This server runs on Deno.serve, which drops GET request bodies: POST the same JSON body to this path, or send the user agent in the ua query parameter or the User-Agent header, or start the server with --http-server node to accept the JSON body on GET",
    );
  }
  return { headers: c.req.raw.headers, stream };
}
