/**
 * RFC 8805 geofeeds: `prefix,country,region,city,postal_code` a line, `#`
 * comments. Apple publishes its iCloud Private Relay egress ranges this way;
 * an operator's own geofeed places their networks (the `location` kind).
 *
 * Strict: the prefix is a network without host bits, the country an ISO
 * 3166-1 alpha-2 code, the region an ISO 3166-2 code of that country, at
 * most five fields; empty fields are allowed (RFC 8805 section 2.1.1).
 * Quoted fields are not: no published geofeed we know of uses them.
 */

import { checkNetwork, eachLine, type GeoPlace, type ParsedFeed, show } from "./feed_common.ts";

export function parseGeofeed(text: string, label: string, feed: ParsedFeed): void {
  const places: GeoPlace[] = [];
  eachLine(text, label, feed, (line) => {
    if (line.includes('"')) throw new Error(`quoted fields are not supported: ${show(line)}`);
    const fields = line.split(",").map((f) => f.trim());
    if (fields.length > 5) {
      throw new Error(`${fields.length} fields, at most 5 (prefix,country,region,city,postal)`);
    }
    const [prefix = "", country = "", region = "", city = "", postal = ""] = fields;
    checkNetwork(prefix);
    const cc = country.toUpperCase();
    if (cc !== "" && !/^[A-Z]{2}$/.test(cc)) {
      throw new Error(`country ${show(country)} is not an ISO 3166-1 alpha-2 code`);
    }
    const rc = region.toUpperCase();
    if (rc !== "" && (!/^[A-Z]{2}-[A-Z0-9]{1,3}$/.test(rc) || (cc !== "" && !rc.startsWith(cc)))) {
      throw new Error(`region ${show(region)} is not an ISO 3166-2 code of ${show(country)}`);
    }
    feed.networks.push(prefix);
    places.push({
      country: cc || null,
      region: rc || null,
      city: city || null,
      postal: postal || null,
    });
  }, { trailingComments: false });
  feed.places = places;
}
