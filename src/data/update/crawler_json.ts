/**
 * `crawler-json`: the range files crawler operators publish so that sites can
 * tell their real crawlers from user agents copied by others (Google's
 * `googlebot.json`, Bing's `bingbot.json`, OpenAI's `gptbot.json`, Apple's,
 * DuckDuckGo's, Perplexity's), all in one shape:
 *
 * ```json
 * { "creationTime": "2026-08-22T10:00:00.000000",
 *   "prefixes": [ { "ipv4Prefix": "66.249.64.0/27" }, { "ipv6Prefix": "2001:4860:4801:10::/64" } ] }
 * ```
 *
 * Parsed strictly: each entry names one prefix of the family its key says.
 * Invisible characters (U+200B and kin: Bing's file has carried them inside
 * prefixes since 2022) and surrounding spaces are dropped from each prefix.
 */

import { parseAddressKey } from "../mmdb/writer/key.ts";
import { checkNetwork, isObject, type ParsedFeed, parseJsonObject, show } from "./feed_common.ts";

/**
 * Zero-width and other invisible format characters: U+200B-U+200F, U+2060-U+2064,
 * U+FEFF, U+00AD (soft hyphen), U+180E; with white space.
 */
const INVISIBLE = /[\s\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/g;

const KEYS = { ipv4Prefix: 4, ipv6Prefix: 6 } as const;

export function parseCrawlerJson(text: string, label: string, feed: ParsedFeed): void {
  const json = parseJsonObject(text.replace(/^\uFEFF/, ""), label);
  if (!Array.isArray(json.prefixes)) {
    throw new Error(`${label}: prefixes is not an array: not a crawler range file`);
  }
  json.prefixes.forEach((entry, i) => {
    const where = `${label}: prefixes[${i}]`;
    if (!isObject(entry)) throw new Error(`${where} is not an object`);
    const keys = Object.keys(entry).filter((k) => k in KEYS) as (keyof typeof KEYS)[];
    if (keys.length !== 1) {
      throw new Error(`${where}: expected one of ipv4Prefix or ipv6Prefix, got ${show(entry)}`);
    }
    const key = keys[0]!;
    const raw = entry[key];
    if (typeof raw !== "string") throw new Error(`${where}.${key}: not a string`);
    const prefix = raw.replace(INVISIBLE, "");
    try {
      checkNetwork(prefix);
    } catch (error) {
      throw new Error(`${where}.${key}: ${(error as Error).message}`);
    }
    const v4 = parseAddressKey(prefix.split("/")[0]!, new Uint32Array(4));
    if (v4 !== (KEYS[key] === 4)) {
      throw new Error(`${where}.${key}: ${show(prefix)} is not an IPv${KEYS[key]} prefix`);
    }
    feed.networks.push(prefix);
  });
  feed.dataDate = utcDate(json.creationTime);
}

/** An ISO 8601 time without a zone, read as UTC (as the publishers mean it). */
function utcDate(value: unknown): Date | null {
  if (typeof value !== "string") return null;
  const time = Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(time) ? null : new Date(time);
}
