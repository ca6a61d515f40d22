/**
 * The cloud providers' published range files, parsed strictly: each prefix
 * must be a valid network (no host bits), each list where the format puts it.
 *
 * - `aws-json`: AWS `ip-ranges.json`, `createDate` "2021-08-17-11-31-16" (UTC).
 * - `google-json`: Google `cloud.json`/`goog.json`, `creationTime` (ISO 8601, UTC).
 * - `oracle-json`: Oracle `public_ip_ranges.json`, `last_updated_timestamp` (UTC).
 * - `azure-json`: Microsoft's Azure service tags (`ServiceTags_Public_*.json`);
 *   it states no date (`changeNumber` is a counter), so the download's stands.
 */

import { checkNetwork, isObject, type ParsedFeed, parseJsonObject } from "./feed_common.ts";

/** The objects of an array member; absent = none (only where the format allows it). */
function objects(value: unknown, where: string, required: boolean): Record<string, unknown>[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value)) throw new Error(`${where} is not an array`);
  return value.map((item, i) => {
    if (!isObject(item)) throw new Error(`${where}[${i}] is not an object`);
    return item;
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

/** An ISO 8601 time without a zone, read as UTC (as the providers mean it). */
function utcDate(value: unknown): Date | null {
  if (typeof value !== "string") return null;
  const time = Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(time) ? null : new Date(time);
}

export function parseAws(text: string, label: string, feed: ParsedFeed): void {
  const json = parseJsonObject(text, label);
  objects(json.prefixes, `${label}: prefixes`, false).forEach((p, i) =>
    addPrefix(feed, p.ip_prefix, `${label}: prefixes[${i}]`)
  );
  objects(json.ipv6_prefixes, `${label}: ipv6_prefixes`, false).forEach((p, i) =>
    addPrefix(feed, p.ipv6_prefix, `${label}: ipv6_prefixes[${i}]`)
  );
  const date = /^(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)$/.exec(String(json.createDate));
  if (date) {
    const [, y, mo, d, h, mi, s] = date.map(Number) as number[];
    feed.dataDate = new Date(Date.UTC(y!, mo! - 1, d, h, mi, s));
  }
}

export function parseGoogle(text: string, label: string, feed: ParsedFeed): void {
  const json = parseJsonObject(text, label);
  objects(json.prefixes, `${label}: prefixes`, false).forEach((p, i) =>
    addPrefix(feed, p.ipv4Prefix ?? p.ipv6Prefix, `${label}: prefixes[${i}]`)
  );
  feed.dataDate = utcDate(json.creationTime);
}

/** `{last_updated_timestamp, regions: [{region, cidrs: [{cidr, tags}]}]}`. */
export function parseOracle(text: string, label: string, feed: ParsedFeed): void {
  const json = parseJsonObject(text, label);
  objects(json.regions, `${label}: regions`, true).forEach((region, r) =>
    objects(region.cidrs, `${label}: regions[${r}].cidrs`, true).forEach((c, i) =>
      addPrefix(feed, c.cidr, `${label}: regions[${r}].cidrs[${i}]`)
    )
  );
  feed.dataDate = utcDate(json.last_updated_timestamp);
}

/** `{changeNumber, cloud, values: [{name, properties: {addressPrefixes: [...]}}]}`. */
export function parseAzure(text: string, label: string, feed: ParsedFeed): void {
  // Microsoft's files may start with a byte-order mark.
  const json = parseJsonObject(text.replace(/^\uFEFF/, ""), label);
  if (typeof json.changeNumber !== "number") {
    throw new Error(`${label}: no changeNumber: not an Azure service tags file`);
  }
  objects(json.values, `${label}: values`, true).forEach((tag, t) => {
    const where = `${label}: values[${t}]`;
    if (!isObject(tag.properties)) throw new Error(`${where}: no properties`);
    const list = tag.properties.addressPrefixes;
    if (!Array.isArray(list)) {
      throw new Error(`${where}.properties.addressPrefixes is not an array`);
    }
    list.forEach((p, i) => addPrefix(feed, p, `${where}.properties.addressPrefixes[${i}]`));
  });
}
