/**
 * The JSON envelope of one whole lookup result, built for the hot path (the
 * same JSON value as `JSON.stringify({ success: true, data: result })`):
 *
 * - The text of each shared part (src/base/shared_part.ts) is made once and remembered.
 * - Every character outside ASCII is written as a `\uXXXX` escape, so the body
 *   is a one-byte string that the runtime sends without transcoding (a result
 *   holds emoji and non-Latin names, and transcoding every body is a large
 *   share of the server's work). JSON parsers read the escapes back as the
 *   same characters.
 */

import { rememberedTexts, SHARED_TEXTS } from "../../base/shared_part.ts";
import type { FailedItem, LookupResult } from "../../base/types.ts";

const NON_ASCII = /[\u0080-\uffff]/g;
const HAS_NON_ASCII = /[\u0080-\uffff]/;
const escapeUnit = (unit: string) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `JSON.stringify` with every non-ASCII UTF-16 unit escaped. */
export function asciiJson(value: unknown): string {
  const text = JSON.stringify(value);
  return HAS_NON_ASCII.test(text) ? oneByte(text.replace(NON_ASCII, escapeUnit)) : text;
}

/**
 * The same ASCII text, held one byte a character: `replace` keeps the two-byte
 * representation of the string it was called on, and a two-byte part makes
 * every answer it is joined into two-byte too, doubling the cost of each later
 * copy and of encoding the body (where a streamed bulk answer spends much of
 * its time). Decoding ASCII bytes gives a one-byte string.
 */
function oneByte(ascii: string): string {
  return decoder.decode(encoder.encode(ascii));
}

/**
 * A part's JSON text; `texts` is `value[SHARED_TEXTS]` as its caller read it
 * (see resultJson). Only shared parts are ever remembered.
 */
function part(value: object, texts: Record<string, unknown> | undefined): string {
  texts ??= rememberedTexts(value);
  if (texts === undefined) return asciiJson(value);
  return (texts.json as string | undefined) ?? (texts.json = asciiJson(value));
}

type WithTexts = { [SHARED_TEXTS]?: Record<string, unknown> };

/** `{"success":true,"data":<result>}` with the keys in the result's layout order. */
export function resultEnvelopeJson(r: LookupResult): string {
  return resultJson(r, '{"success":true,"data":', "}");
}

/**
 * The bulk envelope `{"success":true,"data":{"responseArray":[...]}}`, each
 * result assembled like resultEnvelopeJson's (a failed item as it is): a
 * thousand results cost a join of remembered texts, not a megabyte of
 * `JSON.stringify` and escaping.
 */
export function bulkEnvelopeJson(items: readonly (LookupResult | FailedItem)[]): string {
  return `{"success":true,"data":{"responseArray":[${items.map(bulkItemJson).join(",")}]}}`;
}

/** One bulk item's JSON text, as `responseArray` holds it (a streamed answer writes the same). */
export function bulkItemJson(item: LookupResult | FailedItem): string {
  return "error" in item ? asciiJson(item) : resultJson(item, "", "");
}

/**
 * One result's JSON object, in layout order, between `before` and `after`. Each part's remembered texts are
 * read here, one property read per part: each read sees one shape, where one
 * read inside `part` would see all seven and go megamorphic (bench:profile).
 */
function resultJson(r: LookupResult, before: string, after: string): string {
  const g = r.geoLocation as WithTexts, t = r.timezone as WithTexts, f = r.flag as WithTexts;
  const c = r.currency as WithTexts, n = r.connection as WithTexts;
  const u = r.userAgent as WithTexts, s = r.security as WithTexts;
  // An address is ASCII: JSON.stringify alone (no escaping pass) is the same text. A template,
  // not an array joined: the join costs more, even with the flattening the template leaves.
  return `${before}{"ip":${JSON.stringify(r.ip)},"geoLocation":${
    part(g, g[SHARED_TEXTS])
  },"timezone":${part(t, t[SHARED_TEXTS])},"flag":${part(f, f[SHARED_TEXTS])},"currency":${
    part(c, c[SHARED_TEXTS])
  },"connection":${part(n, n[SHARED_TEXTS])},"userAgent":${part(u, u[SHARED_TEXTS])},"security":${
    part(s, s[SHARED_TEXTS])
  }}${after}`;
}
