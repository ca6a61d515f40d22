/**
 * `/asn/{n}` as a plain function: the raw path parameter, the data set, the
 * `get` selection and the format in; the rendered answer (or an AppError) out.
 * The command line's `ipintel asn` and the HTTP route both call it.
 */

import { BadRequestError, DataUnavailableError, quoteInput } from "../../base/errors.ts";
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
  /**
   * The answer of `/asn/{n}`: `data` after `get`, in `format` (CSV: one row per
   * prefix). Remembered per data set, AS, format and selection (bounded, see
   * {@link RENDERED_LIMITS}): the largest ASes take tens of milliseconds to render.
   */
  answer(
    raw: string,
    data: DataSet,
    selection: FieldSelection | null,
    format: OutputFormat,
  ): Promise<Rendered>;
  /**
   * How many prefixes the answer lists (those of the families `get` keeps: 0
   * when it keeps neither), known before it is rendered: what `/asn/{n}`
   * charges by ({@link asnCost}). Rejects as `data` does.
   */
  prefixes(raw: string, data: DataSet, selection: FieldSelection | null): Promise<number>;
}

/**
 * `format` on `/asn/{n}`: json (also when absent or empty), xml or csv, any
 * case. Anything else is a BadRequestError naming the value: an AS's answer
 * can be large, and answering JSON to `format=ndjson` would send it in a form
 * the client did not ask for.
 */
export function parseAsnFormat(value: string | null | undefined): OutputFormat {
  const format = value?.trim().toLowerCase() ?? "";
  if (format === "") return "json";
  if (format === "json" || format === "xml" || format === "csv") return format;
  throw new BadRequestError(
    `Invalid format ${quoteInput(value!)}: /asn/{n} answers json, xml or csv`,
  );
}

/** Prefixes per unit above the first: `/asn/{n}` costs 1 + floor(prefixes / 1,000) units. */
export const PREFIXES_PER_UNIT = 1000;

/**
 * The units an answer listing `prefixes` prefixes costs: one, and one more per
 * full block of {@link PREFIXES_PER_UNIT} (AS15169's 180: 1; AS4134's 9,912: 10).
 */
export function asnCost(prefixes: number): number {
  return 1 + Math.floor(prefixes / PREFIXES_PER_UNIT);
}

/** Bounds of the rendered answers kept per data set: entries and characters of their bodies. */
export const RENDERED_LIMITS = { entries: 256, chars: 16 * 1024 * 1024 } as const;

/** What the view keeps per data set: its index, rendered answers, and each AS's prefix counts. */
interface SetState {
  index: Promise<AsnIndex> | null;
  /** Rendered answers by `asn format names`, least recently used first. */
  rendered: Map<string, Rendered>;
  renderedChars: number;
  /** Prefixes per AS number (IPv4, IPv6), as the index gives them (bounded like `rendered`). */
  counts: Map<number, { ipv4: number; ipv6: number }>;
}

/** Whether `get` keeps a family's prefixes (no `get`: both). */
function keeps(selection: FieldSelection | null, family: "ipv4" | "ipv6"): boolean {
  if (!selection) return true;
  return selection.names.some((name) =>
    name === "prefixes" || name === family || name === `prefixes.${family}`
  );
}

/**
 * The ASN view. Its index is built on the first question about a data set
 * (about a second for the default data, in slices: other requests are
 * answered meanwhile; questions arriving during the build wait for the same
 * one) and kept with that set: a reload brings a new set, whose index is
 * built on its first question.
 */
export function createAsnView(): AsnView {
  const states = new WeakMap<DataSet, SetState>();
  const stateOf = (data: DataSet): SetState => {
    let state = states.get(data);
    if (!state) {
      state = { index: null, rendered: new Map(), renderedChars: 0, counts: new Map() };
      states.set(data, state);
    }
    return state;
  };
  const indexOf = (data: DataSet): Promise<AsnIndex> => {
    const state = stateOf(data);
    let index = state.index;
    if (!index) {
      const db = data.asn ?? data.isp;
      if (!db) {
        throw new DataUnavailableError("No ASN database is installed: the ASN view needs one");
      }
      index = buildAsnIndexInSlices(db.bytes);
      // A build that failed is not kept: the next question tries again (and says why).
      index.catch(() => state.index = null);
      state.index = index;
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

  const remember = (state: SetState, key: string, rendered: Rendered) => {
    if (rendered.body.length > RENDERED_LIMITS.chars) return;
    state.rendered.set(key, rendered);
    state.renderedChars += rendered.body.length;
    for (const [oldest, kept] of state.rendered) {
      if (
        state.rendered.size <= RENDERED_LIMITS.entries &&
        state.renderedChars <= RENDERED_LIMITS.chars
      ) break;
      state.rendered.delete(oldest);
      state.renderedChars -= kept.body.length;
    }
  };

  return {
    data: asnData,
    async answer(raw, data, selection, format) {
      const asn = parseAsNumber(raw);
      const state = stateOf(data);
      const key = `${asn} ${format} ${selection?.names.join(",") ?? ""}`;
      const kept = state.rendered.get(key);
      if (kept) {
        // Most recently used last.
        state.rendered.delete(key);
        state.rendered.set(key, kept);
        return kept;
      }
      const selected = applySelection(
        await asnData(raw, data, selection) as unknown as LookupResult,
        selection,
      );
      const rendered = renderSuccess(format === "csv" ? csvRows(selected) : selected, format);
      remember(state, key, rendered);
      return rendered;
    },
    async prefixes(raw, data, selection) {
      const asn = parseAsNumber(raw);
      const state = stateOf(data);
      let counts = state.counts.get(asn);
      if (!counts) {
        const entry = reservedAsName(asn) === null ? (await indexOf(data)).find(asn) : null;
        if (!entry) throw asnNotFound(asn);
        counts = { ipv4: entry.ipv4.length, ipv6: entry.ipv6.length };
        if (state.counts.size >= RENDERED_LIMITS.entries * 16) state.counts.clear();
        state.counts.set(asn, counts);
      }
      return (keeps(selection, "ipv4") ? counts.ipv4 : 0) +
        (keeps(selection, "ipv6") ? counts.ipv6 : 0);
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
