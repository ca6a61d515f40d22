/**
 * Strict parsers of the list formats a feed comes in. A line that is not
 * what the format promises is an error naming the source and the line: a
 * corrupt or wrong download must never compile into a smaller list silently.
 *
 * - `ip-list`: one address or CIDR a line; `#` and `;` start comments (whole
 *   line or after the entry). The Tor bulk exit list, FireHOL ipsets/netsets
 *   and X4BNet's lists have this shape.
 * - `asn-list`: one AS number a line (`AS13335` or `13335`), same comments.
 * - `csv-ranges`: `first,last[,anything]` a line, same comments.
 * - `aws-json`: AWS `ip-ranges.json`; `google-json`: Google `cloud.json`/`goog.json`.
 */

import { compareKeys, parseAddressKey, parseNetworkKeys } from "../mmdb/writer/key.ts";
import type { SourceFormat } from "../sources/manifest.ts";

/** What a feed lists, and the date it gives for itself. */
export interface ParsedFeed {
  /** CIDRs or bare addresses. */
  networks: string[];
  /** Inclusive address ranges. */
  ranges: [string, string][];
  asns: number[];
  /** Entries in all three. */
  count: number;
  /** The publication date the feed states (FireHOL header, AWS createDate, Google creationTime). */
  dataDate: Date | null;
}

/** Parses a downloaded feed; throws `<label> line N: ...` on the first bad line. */
export function parseFeed(format: SourceFormat, text: string, label: string): ParsedFeed {
  const feed: ParsedFeed = { networks: [], ranges: [], asns: [], count: 0, dataDate: null };
  switch (format) {
    case "ip-list":
      eachLine(text, label, feed, (value) => {
        checkNetwork(value);
        feed.networks.push(value);
      });
      break;
    case "asn-list":
      eachLine(text, label, feed, (value) => {
        const match = /^(?:AS)?(\d{1,10})$/i.exec(value);
        const asn = Number(match?.[1]);
        if (!match || asn > 0xffffffff) throw new Error(`invalid AS number ${show(value)}`);
        feed.asns.push(asn);
      });
      break;
    case "csv-ranges":
      eachLine(text, label, feed, (value) => {
        const [first = "", last = ""] = value.split(",").map((f) => f.trim().replace(/^"|"$/g, ""));
        feed.ranges.push(checkRange(first, last));
      });
      break;
    case "aws-json":
      parseAws(text, label, feed);
      break;
    case "google-json":
      parseGoogle(text, label, feed);
      break;
    default:
      throw new Error(`${label}: format "${format}" is not a list format`);
  }
  feed.count = feed.networks.length + feed.ranges.length + feed.asns.length;
  return feed;
}

function eachLine(
  text: string,
  label: string,
  feed: ParsedFeed,
  onValue: (value: string) => void,
): void {
  if (text.includes("\0")) throw new Error(`${label}: binary data, not a text list`);
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    if (line.startsWith("#") || line.startsWith(";")) {
      feed.dataDate ??= headerDate(line);
      continue;
    }
    // An entry may carry a comment after it: "1.10.16.0/20 ; SBL256894".
    const value = line.replace(/\s+[#;].*$/, "");
    try {
      onValue(value);
    } catch (error) {
      throw new Error(`${label} line ${i + 1}: ${(error as Error).message}`);
    }
  }
}

// FireHOL: "# This File Date  : Fri Nov 13 17:18:59 UTC 2015".
const FIREHOL_DATE = /^#\s*This File Date\s*:\s*(.+?)\s*$/i;

function headerDate(line: string): Date | null {
  const match = FIREHOL_DATE.exec(line);
  if (!match) return null;
  const time = Date.parse(match[1]!.replace(/^\w{3} /, "").replace(" UTC ", " ") + " UTC");
  return Number.isNaN(time) ? null : new Date(time);
}

const SCRATCH_A = new Uint32Array(4);
const SCRATCH_B = new Uint32Array(4);

function checkNetwork(value: string): void {
  try {
    parseNetworkKeys(value, SCRATCH_A, SCRATCH_B);
  } catch (error) {
    throw new Error(`invalid address or network ${show(value)}: ${(error as Error).message}`);
  }
}

function checkRange(first: string, last: string): [string, string] {
  let v4a: boolean, v4b: boolean;
  try {
    v4a = parseAddressKey(first, SCRATCH_A);
    v4b = parseAddressKey(last, SCRATCH_B);
  } catch (error) {
    throw new Error(
      `invalid range ${show(`${first},${last}`)}: ${(error as Error).message}`,
    );
  }
  if (v4a !== v4b) throw new Error(`range ${show(`${first},${last}`)} mixes IPv4 and IPv6`);
  if (compareKeys(SCRATCH_A, SCRATCH_B) > 0) {
    throw new Error(`range ${show(`${first},${last}`)} ends before it starts`);
  }
  return [first, last];
}

function parseJson(text: string, label: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${label}: invalid JSON: ${(error as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new Error(`${label}: expected a JSON object`);
  }
  return json as Record<string, unknown>;
}

function prefixes(
  json: Record<string, unknown>,
  key: string,
  label: string,
): Record<string, unknown>[] {
  const list = json[key];
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${label}: "${key}" is not an array`);
  return list.map((item, i) => {
    if (typeof item !== "object" || item === null) {
      throw new Error(`${label}: ${key}[${i}] is not an object`);
    }
    return item as Record<string, unknown>;
  });
}

function addPrefix(feed: ParsedFeed, value: unknown, where: string): void {
  if (typeof value !== "string") throw new Error(`${where}: no prefix`);
  try {
    checkNetwork(value);
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
  feed.networks.push(value);
}

/** AWS: `createDate` "2021-08-17-11-31-16", `prefixes[].ip_prefix`, `ipv6_prefixes[].ipv6_prefix`. */
function parseAws(text: string, label: string, feed: ParsedFeed): void {
  const json = parseJson(text, label);
  prefixes(json, "prefixes", label).forEach((p, i) =>
    addPrefix(feed, p.ip_prefix, `${label}: prefixes[${i}]`)
  );
  prefixes(json, "ipv6_prefixes", label).forEach((p, i) =>
    addPrefix(feed, p.ipv6_prefix, `${label}: ipv6_prefixes[${i}]`)
  );
  const date = /^(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)$/.exec(String(json.createDate));
  if (date) {
    const [, y, mo, d, h, mi, s] = date.map(Number) as number[];
    feed.dataDate = new Date(Date.UTC(y!, mo! - 1, d, h, mi, s));
  }
}

/** Google: `creationTime` (ISO 8601, UTC), `prefixes[].ipv4Prefix | ipv6Prefix`. */
function parseGoogle(text: string, label: string, feed: ParsedFeed): void {
  const json = parseJson(text, label);
  prefixes(json, "prefixes", label).forEach((p, i) =>
    addPrefix(feed, p.ipv4Prefix ?? p.ipv6Prefix, `${label}: prefixes[${i}]`)
  );
  const time = Date.parse(`${String(json.creationTime).replace(/Z?$/, "")}Z`);
  if (!Number.isNaN(time)) feed.dataDate = new Date(time);
}

function show(value: string): string {
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}..."` : text;
}
