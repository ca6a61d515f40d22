/**
 * The answer cache's key (answer_cache.ts): built here, beside the cache, from
 * everything a rendered `/ip/{ip}` or `/me` answer depends on besides the data
 * set (the cache holds one data set's answers at a time): the address, the
 * format, `get`, `lang`, `at`, the user agent where the answer shows it (or,
 * where it shows only the crawler verdict, the crawler the user agent claims),
 * and the second where it shows the time zone's `current_time`.
 *
 * A part added to the answer that depends on something else (a crawler claim
 * read from the user agent, a header) must add a component here; the key-drift
 * test (tests/service/app/answer_key_test.ts) changes one input at a time and
 * expects another key.
 */

import type { FieldSelection } from "../../core/format/mod.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";

/** What of a user agent a crawler verdict depends on: the lookup's claimKey. */
export type ClaimReader = Pick<Lookup, "claimKey">;
import type { LookupRequest } from "../http/lookup_request.ts";

/**
 * What an answer's text depends on besides the data set and the second: the address and the
 * request's parameters. `lookup` says what of the user agent a crawler verdict depends on (the
 * claimed crawler, not the whole string: browsers share one entry).
 */
export function answerKey(address: string, p: LookupRequest, lookup: ClaimReader): string {
  const selection = p.selection === null ? "*" : p.selection.names.join(",");
  const userAgent = showsUserAgent(p.selection)
    ? p.userAgent ?? ""
    : showsVerdict(p.selection)
    ? `claim:${lookup.claimKey(p.userAgent, p)}`
    : "";
  return `${p.format}\n${p.lang ?? ""}\n${
    p.at?.getTime() ?? ""
  }\n${selection}\n${userAgent}\n${address}`;
}

/**
 * The second an answer is made for (`nowMs` is the wall clock), where it shows
 * the time zone's `current_time`; null where it does not (it holds as long as
 * the data set).
 */
export function answerSecond(selection: FieldSelection | null, nowMs: number): number | null {
  return showsTime(selection) ? Math.floor(nowMs / 1000) : null;
}

/**
 * Whether the answer shows the time zone (its `current_time` changes every second), by a
 * path or a bare name (`current_time`).
 */
export const showsTime = (selection: FieldSelection | null): boolean =>
  selection === null || selection.timezone;

/**
 * Whether the answer shows the crawler verdict (risk.crawler) or what it changes (isThreat),
 * by a group, a path or a bare name.
 */
export const showsVerdict = (selection: FieldSelection | null): boolean =>
  selection === null || selection.risk ||
  selection.names.some((name) =>
    name === "security" || name === "isThreat" || name === "security.isThreat"
  );

/** Whether the answer shows the parsed user agent, by a path or a bare name (`browser`). */
export const showsUserAgent = (selection: FieldSelection | null): boolean =>
  selection === null || selection.userAgent;
