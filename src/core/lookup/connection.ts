/** The `connection` object: ASN database, plus the ISP, Domain and Connection-Type databases. */

import type { ParsedIp } from "../../base/ip/parse.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import type { AsnRecord, IspRecord } from "../../data/mmdb/records.ts";
import type { Connection } from "../../base/types.ts";
import { sharedPart } from "../../base/shared_part.ts";
import { SlotTable } from "../../base/cache/slot_table.ts";

/** The front table holds 2^16 connections (by ASN record offset). */
const FRONT_BITS = 16;

export const NO_CONNECTION: Connection = sharedPart({
  asn_number: null,
  asn_org: null,
  isp: null,
  org: null,
  domain: null,
  connection_type: null,
});

/**
 * Returns the connection of an address; `NO_CONNECTION` when no network
 * database knows it. With only an ASN database, answers are cached per ASN
 * record, and by the record's offset in a table in front of the record cache
 * (filled only while `filling()` says so), and `isp`/`org` fall back to the
 * AS organisation.
 */
export function createConnectionOf(
  data: Pick<DataSet, "asn" | "isp" | "domain" | "connectionType">,
  filling: () => boolean = () => true,
): (ip: ParsedIp) => Connection {
  const byAsn = new WeakMap<AsnRecord, Connection>();
  const fromAsn = (record: AsnRecord): Connection => {
    let connection = byAsn.get(record);
    if (!connection) {
      const org = record.autonomous_system_organization ?? null;
      connection = sharedPart({
        asn_number: record.autonomous_system_number ?? null,
        asn_org: org,
        isp: org,
        org,
        domain: null,
        connection_type: null,
      });
      byAsn.set(record, connection);
    }
    return connection;
  };
  const { asn, isp, domain, connectionType } = data;
  if (!isp && !domain && !connectionType) {
    if (!asn) return () => NO_CONNECTION;
    const front = new SlotTable<Connection>(FRONT_BITS);
    return (ip) => {
      const offset = asn.recordOffset(ip.bytes);
      if (offset === -1) return NO_CONNECTION;
      let connection = front.get(offset);
      if (connection === undefined) {
        connection = fromAsn(asn.recordAt(offset));
        if (filling()) front.set(offset, connection);
      }
      return connection;
    };
  }
  return (ip) => {
    const a = asn?.getBytes(ip.bytes) ?? null;
    const i: IspRecord | null = isp?.getBytes(ip.bytes) ?? null;
    const d = domain?.getBytes(ip.bytes)?.domain ?? null;
    const t = connectionType?.getBytes(ip.bytes)?.connection_type ?? null;
    if (!a && !i && d === null && t === null) return NO_CONNECTION;
    const base = a ? fromAsn(a) : NO_CONNECTION;
    const asnOrg = base.asn_org ?? i?.autonomous_system_organization ?? null;
    // Without an ISP record, isp and org fall back to the AS organisation.
    return {
      asn_number: base.asn_number ?? i?.autonomous_system_number ?? null,
      asn_org: asnOrg,
      isp: i ? i.isp ?? null : asnOrg,
      org: i ? i.organization ?? null : asnOrg,
      domain: d,
      connection_type: t,
    };
  };
}
