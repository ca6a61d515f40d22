/**
 * Strict parsers of the list formats a feed comes in. A line that is not
 * what the format promises is an error naming the source and the line: a
 * corrupt or wrong download must never compile into a smaller list silently.
 *
 * - `ip-list`: one address or CIDR a line; `#` and `;` start comments (whole
 *   line or after the entry). The Tor bulk exit list, FireHOL ipsets/netsets,
 *   X4BNet's lists, Cloudflare's `ips-v4`/`ips-v6` and Spamhaus's older text
 *   form (`2001:678:6c4::/48 ; SBL626637`, dated by its `; Last-Modified:` line)
 *   have this shape.
 * - `asn-list`: one AS number a line (`AS13335` or `13335`), same comments.
 * - `csv-ranges`: `first,last[,anything]` a line, same comments.
 * - `ipsum`: stamparm/ipsum, `address<TAB>count` a line (the number of
 *   blocklists naming the address); only addresses on `minCount` or more lists count.
 * - `aws-json`, `google-json`, `oracle-json`, `azure-json`: the providers'
 *   range files (cloud_json.ts); `drop-json`: Spamhaus DROP (drop_json.ts);
 *   `geofeed`: RFC 8805 CSV (geofeed.ts); `crawler-json`: the crawler operators'
 *   published ranges (crawler_json.ts).
 */

import type { SourceFormat } from "../sources/manifest.ts";
import { DEFAULT_IPSUM_MIN_COUNT } from "../sources/sources_file.ts";
import { parseAws, parseAzure, parseGoogle, parseOracle } from "./cloud_json.ts";
import { parseCrawlerJson } from "./crawler_json.ts";
import { parseDropJson } from "./drop_json.ts";
import {
  checkNetwork,
  checkRange,
  eachLine,
  emptyFeed,
  type ParsedFeed,
  show,
} from "./feed_common.ts";
import { parseGeofeed } from "./geofeed.ts";

export type { GeoPlace, ParsedFeed } from "./feed_common.ts";

/** Settings of the sources file a parser needs. */
export interface ParseOptions {
  /** `ipsum`: the fewest lists an address must be on (default DEFAULT_IPSUM_MIN_COUNT). */
  minCount?: number;
}

/** Parses a downloaded feed; throws `<label> line N: ...` on the first bad line. */
export function parseFeed(
  format: SourceFormat,
  text: string,
  label: string,
  options: ParseOptions = {},
): ParsedFeed {
  const feed = emptyFeed();
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
    case "ipsum":
      parseIpsum(text, label, feed, options.minCount ?? DEFAULT_IPSUM_MIN_COUNT);
      break;
    case "aws-json":
      parseAws(text, label, feed);
      break;
    case "google-json":
      parseGoogle(text, label, feed);
      break;
    case "oracle-json":
      parseOracle(text, label, feed);
      break;
    case "azure-json":
      parseAzure(text, label, feed);
      break;
    case "drop-json":
      parseDropJson(text, label, feed);
      break;
    case "geofeed":
      parseGeofeed(text, label, feed);
      break;
    case "crawler-json":
      parseCrawlerJson(text, label, feed);
      break;
    default:
      throw new Error(`${label}: format "${format}" is not a list format`);
  }
  feed.count = feed.networks.length + feed.ranges.length + feed.asns.length;
  return feed;
}

/** `address<TAB>count`; every line is checked, those under `minCount` are left out. */
function parseIpsum(text: string, label: string, feed: ParsedFeed, minCount: number): void {
  eachLine(text, label, feed, (value) => {
    const match = /^(\S+)\t(\d{1,9})$/.exec(value);
    if (!match) throw new Error(`expected "address<TAB>count", got ${show(value)}`);
    const [, address, count] = match;
    checkNetwork(address!);
    if (address!.includes("/")) throw new Error(`expected an address, got ${show(address)}`);
    if (Number(count) < 1) throw new Error(`count ${count} is not a positive number`);
    if (Number(count) >= minCount) feed.networks.push(address!);
  }, { trailingComments: false });
}
