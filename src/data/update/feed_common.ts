/**
 * What every list parser shares: the parsed shape, the line walk with its
 * comments and header dates, and the strict network and range checks.
 */

import { compareKeys, parseAddressKey, parseNetworkKeys } from "../mmdb/writer/key.ts";

/** A geofeed row's place (RFC 8805); null where the row leaves a field empty. */
export interface GeoPlace {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
  /** ISO 3166-2 subdivision code ("US-CA"), upper case. */
  region: string | null;
  city: string | null;
  postal: string | null;
}

/** What a feed lists, and the date it gives for itself. */
export interface ParsedFeed {
  /** CIDRs or bare addresses. */
  networks: string[];
  /** Inclusive address ranges. */
  ranges: [string, string][];
  asns: number[];
  /** Geofeeds: the place of each entry of `networks`, same order. */
  places?: GeoPlace[];
  /** Entries in all three. */
  count: number;
  /** The publication date the feed states (a header, a metadata line, a JSON field). */
  dataDate: Date | null;
}

export function emptyFeed(): ParsedFeed {
  return { networks: [], ranges: [], asns: [], count: 0, dataDate: null };
}

/**
 * Calls `onValue` with each entry line (trimmed, a trailing `#`/`;` comment
 * cut off); whole-line comments may carry the list's date. An error thrown
 * by `onValue` becomes `<label> line N: ...`.
 */
export function eachLine(
  text: string,
  label: string,
  feed: ParsedFeed,
  onValue: (value: string) => void,
  options: { trailingComments?: boolean } = {},
): void {
  if (text.includes("\0")) throw new Error(`${label}: binary data, not a text list`);
  const trailing = options.trailingComments ?? true;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    if (line.startsWith("#") || line.startsWith(";")) {
      feed.dataDate ??= headerDate(line);
      continue;
    }
    // An entry may carry a comment after it: "1.10.16.0/20 ; SBL256894".
    const value = trailing ? line.replace(/\s+[#;].*$/, "") : line;
    try {
      onValue(value);
    } catch (error) {
      throw new Error(`${label} line ${i + 1}: ${(error as Error).message}`);
    }
  }
}

/** Dates lists state in their comment headers. */
const HEADER_DATES: readonly RegExp[] = [
  // FireHOL: "# This File Date  : Fri Nov 13 17:18:59 UTC 2015".
  /^#\s*This File Date\s*:\s*(.+?)\s*$/i,
  // Spamhaus text lists: "; Last-Modified: Wed, 08 Jan 2025 22:38:36 GMT".
  /^;\s*Last-Modified:\s*(.+?)\s*$/i,
  // IPsum: "# Last update: Sat, 22 Aug 2026 03:00:29 +0200".
  /^#\s*Last update:\s*(.+?)\s*$/i,
];

function headerDate(line: string): Date | null {
  for (const pattern of HEADER_DATES) {
    const match = pattern.exec(line);
    if (!match) continue;
    const text = match[1]!;
    // FireHOL's `date` output puts the zone before the year: move it to the end.
    const firehol = /^\w{3} (\w{3} +\d+ [\d:]+) UTC (\d{4})$/.exec(text);
    const time = Date.parse(firehol ? `${firehol[1]} ${firehol[2]} UTC` : text);
    return Number.isNaN(time) ? null : new Date(time);
  }
  return null;
}

/** Throws unless `value` is an address or a CIDR without host bits. */
export function checkNetwork(value: string): void {
  try {
    parseNetworkKeys(value, new Uint32Array(4), new Uint32Array(4));
  } catch (error) {
    throw new Error(`invalid address or network ${show(value)}: ${(error as Error).message}`);
  }
}

/** Throws unless `first`..`last` is an address range of one family, in order. */
export function checkRange(first: string, last: string): [string, string] {
  let v4a: boolean, v4b: boolean;
  const a = new Uint32Array(4), b = new Uint32Array(4);
  try {
    v4a = parseAddressKey(first, a);
    v4b = parseAddressKey(last, b);
  } catch (error) {
    throw new Error(
      `invalid range ${show(`${first},${last}`)}: ${(error as Error).message}`,
    );
  }
  if (v4a !== v4b) throw new Error(`range ${show(`${first},${last}`)} mixes IPv4 and IPv6`);
  if (compareKeys(a, b) > 0) {
    throw new Error(`range ${show(`${first},${last}`)} ends before it starts`);
  }
  return [first, last];
}

/** Parses a whole-file JSON object; throws `<label>: invalid JSON: ...`. */
export function parseJsonObject(text: string, label: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${label}: invalid JSON: ${(error as Error).message}`);
  }
  if (!isObject(json)) throw new Error(`${label}: expected a JSON object`);
  return json;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value quoted for an error message, cut to 80 characters. */
export function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}..."` : text;
}
