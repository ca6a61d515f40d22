/**
 * `/asn/{n}` as a plain function: the raw path parameter, the data set, the
 * `get` selection and the format in; the rendered answer (or an AppError) out.
 * The command line's `ipintel asn` and the HTTP route both call it.
 */

import { DataUnavailableError } from "../../base/errors.ts";
import {
  applySelection,
  type FieldSelection,
  type OutputFormat,
  type Rendered,
  renderSuccess,
} from "../format/mod.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import type { Json, LookupResult } from "../../base/types.ts";
import { createSlash64Counter, formatBlock, ipv4Size } from "./blocks.ts";
import { type AsnIndex, buildAsnIndexInSlices } from "./index.ts";
import { type ListShare, listShares } from "./lists.ts";
import { asnNotFound, parseAsNumber, reservedAsName } from "./number.ts";

/** The `data` of an `/asn/{n}` answer (see ASN_LAYOUT). */
export interface AsnData {
  asn: number;
  name: string | null;
  country: string | null;
  prefixes: { ipv4: string[]; ipv6: string[] };
  counts: {
    ipv4Prefixes: number;
    ipv6Prefixes: number;
    ipv4Addresses: number;
    ipv6Slash64s: number;
  };
  lists: ListShare[];
}

export interface AsnView {
  /** The AS's data, whole; rejects with BadRequestError (400), not_found (404), DataUnavailableError. */
  data(raw: string, data: DataSet, selection?: FieldSelection | null): Promise<AsnData>;
  /** The answer of `/asn/{n}`: `data` after `get`, in `format` (CSV: one row per prefix). */
  answer(
    raw: string,
    data: DataSet,
    selection: FieldSelection | null,
    format: OutputFormat,
  ): Promise<Rendered>;
}

/**
 * The ASN view. Its index is built on the first question about a data set
 * (about a second for the default data, in slices: other requests are
 * answered meanwhile; questions arriving during the build wait for the same
 * one) and kept with that set: a reload brings a new set, whose index is
 * built on its first question.
 */
export function createAsnView(): AsnView {
  const indexes = new WeakMap<DataSet, Promise<AsnIndex>>();
  const indexOf = (data: DataSet): Promise<AsnIndex> => {
    let index = indexes.get(data);
    if (!index) {
      const db = data.asn ?? data.isp;
      if (!db) {
        throw new DataUnavailableError("No ASN database is installed: the ASN view needs one");
      }
      index = buildAsnIndexInSlices(db.bytes);
      // A build that failed is not kept: the next question tries again (and says why).
      index.catch(() => indexes.delete(data));
      indexes.set(data, index);
    }
    return index;
  };

  const asnData = async (
    raw: string,
    data: DataSet,
    selection?: FieldSelection | null,
  ): Promise<AsnData> => {
    const asn = parseAsNumber(raw);
    // Special-purpose numbers are never a public network's, whatever a data file says.
    const entry = reservedAsName(asn) === null ? (await indexOf(data)).find(asn) : null;
    if (!entry) throw asnNotFound(asn);
    const ipv4Addresses = entry.ipv4.reduce((sum, b) => sum + ipv4Size(b.length), 0);
    const slash64s = createSlash64Counter();
    for (const block of entry.ipv6) slash64s.add(block);
    const wantsLists = !selection || selection.names.includes("lists");
    return {
      asn,
      name: entry.name,
      country: null,
      prefixes: { ipv4: entry.ipv4.map(formatBlock), ipv6: entry.ipv6.map(formatBlock) },
      counts: {
        ipv4Prefixes: entry.ipv4.length,
        ipv6Prefixes: entry.ipv6.length,
        ipv4Addresses,
        ipv6Slash64s: slash64s.total,
      },
      lists: wantsLists
        ? listShares(data, { ...entry, ipv4Addresses, ipv6Slash64s: slash64s.total })
        : [],
    };
  };

  return {
    data: asnData,
    async answer(raw, data, selection, format) {
      const selected = applySelection(
        await asnData(raw, data, selection) as unknown as LookupResult,
        selection,
      );
      return renderSuccess(format === "csv" ? csvRows(selected) : selected, format);
    },
  };
}

/**
 * CSV is the prefix table: one row per prefix (`asn,name,country,version,prefix`,
 * as selected). The per-AS counts and lists have no place in a prefix's row:
 * they come in one row only when `get` leaves the prefixes out.
 */
function csvRows(selected: Record<string, Json>): Json {
  const nested = selected.prefixes as { ipv4?: Json; ipv6?: Json } | undefined;
  const ipv4 = nested?.ipv4 ?? selected.ipv4;
  const ipv6 = nested?.ipv6 ?? selected.ipv6;
  if (!Array.isArray(ipv4) && !Array.isArray(ipv6)) return selected;
  const base: Record<string, Json> = {};
  for (const [key, value] of Object.entries(selected)) {
    if (value === null || typeof value !== "object") base[key] = value;
  }
  const rows: Json[] = [];
  for (const [version, list] of [[4, ipv4], [6, ipv6]] as const) {
    if (!Array.isArray(list)) continue;
    for (const prefix of list) rows.push({ ...base, version, prefix });
  }
  return { responseArray: rows };
}
