/**
 * The opt-in `network` of a lookup: each source that answered for the address
 * and the network it matched. Computed only when `get` names it.
 */

import { formatNetwork } from "../../base/ip/cidr.ts";
import type { ParsedIp } from "../../base/ip/parse.ts";
import type { RiskSource } from "../../data/risk/security.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import type { MatchedNetwork } from "../../base/types.ts";

/** The databases that place an address in a network, in answer order. */
const DATABASES = [
  ["city", "city"],
  ["asn", "asn"],
  ["isp", "isp"],
  ["connectionType", "connection-type"],
  ["domain", "domain"],
] as const;

/**
 * Returns the matched networks of an address: each database with a record for it
 * (its tree's network), the operator's geofeed entries, then every list entry
 * the security sources match (as the `risk` group's `matches`).
 */
export function createMatchedNetworks(
  data: DataSet,
  risk: RiskSource,
): (ip: ParsedIp, asn: number | null) => MatchedNetwork[] {
  const databases = DATABASES.flatMap(([field, kind]) => {
    const db = data[field];
    // The installed source's name: the sources file's, or the operator's variable.
    const source = data.installed.find((s) => s.kind === kind)?.name ?? kind;
    return db ? [{ db, kind, source }] : [];
  });
  return (ip, asn) => {
    const found: MatchedNetwork[] = [];
    for (const { db, kind, source } of databases) {
      if (db.getBytes(ip.bytes) !== null) {
        found.push({ source, kind, network: formatNetwork(ip, db.prefixLength(ip.bytes)) });
      }
    }
    for (const m of data.location?.matches(ip, null) ?? []) {
      found.push({ source: m.source, kind: "location", network: m.network });
    }
    for (const m of risk.explain(ip, asn).matches) {
      found.push({ source: m.source, kind: m.kind, network: m.network });
    }
    return found;
  };
}
