/**
 * The kept history, loaded with the data set: when an entry of a list was
 * first and last seen, and the lists as they stood at a past time (as feed
 * memberships, so the `security` rule and the `risk` group read them as they
 * read the current lists).
 */

import { HistoryUnavailableError } from "../../base/errors.ts";
import { type ParsedIp, parseIp } from "../../base/ip/parse.ts";
import type { FeedMatch, FeedMembership, RiskKind } from "../risk/security.ts";
import { decodeHistory, HISTORY_FILE, type HistoryData, isOpen, listedAt } from "./history_file.ts";
import { rangeCidrs } from "./range_cidrs.ts";

/** When a list first and last named an entry (ISO 8601). */
export interface Seen {
  firstSeen: string;
  /** The last update that listed it (the latest update, while it is still listed). */
  lastSeen: string;
}

/** The lists as they stood at one time. */
export interface ListsAt {
  /** Each kind's lists then; null where no list of the kind was installed. */
  memberships: Record<RiskKind, FeedMembership | null>;
  /** The providers the hosting and relay lists named, by list. */
  providers: ReadonlyMap<string, string>;
}

export interface History {
  /** From when an answer as of a time is complete: the first update recorded, or the kept days' start. */
  readonly start: Date;
  /** The last update recorded. */
  readonly updated: Date;
  /** When `source` first and last listed `network` (its entry text); null when never in the kept history. */
  seen(source: string, network: string | null): Seen | null;
  /** The lists as installed at `time` (not before `start`). */
  listsAt(time: Date): ListsAt;
  /**
   * Which recorded update was in force at `time` (its index; -1 before the
   * first): two times with the same one have the same lists.
   */
  runAt(time: Date): number;
}

/**
 * The data directory's history, or null when none is kept. Only the file's
 * bytes are read here: they are decoded at the first question (`get=risk`,
 * `at`), so an isolate never asked holds a few compressed megabytes, not the
 * decoded tables. A file that cannot be decoded then is reported once on
 * standard error: `seen` answers null and `start` throws a 422 saying why.
 */
export async function loadHistory(dataDir: string): Promise<History | null> {
  const path = `${dataDir}/${HISTORY_FILE}`;
  let bytes: Uint8Array | null;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    console.error(`history: cannot read ${path}: ${(error as Error).message}`);
    return null;
  }
  let decoded: History | Error | undefined;
  const history = (): History | Error => {
    if (decoded === undefined) {
      try {
        decoded = createHistory(decodeHistory(bytes!, path));
      } catch (error) {
        decoded = error as Error;
        console.error(`history: ${decoded.message}; answering without it`);
      }
      bytes = null;
    }
    return decoded;
  };
  const usable = (): History => {
    const h = history();
    if (h instanceof Error) {
      throw new HistoryUnavailableError(`The list history cannot be read: ${h.message}`);
    }
    return h;
  };
  return {
    get start() {
      return usable().start;
    },
    get updated() {
      return usable().updated;
    },
    seen: (source, network) => {
      const h = history();
      return h instanceof Error ? null : h.seen(source, network);
    },
    listsAt: (time) => usable().listsAt(time),
    runAt: (time) => usable().runAt(time),
  };
}

/** One entry of one list, placed in the index. */
interface Ref {
  source: string;
  kind: RiskKind;
  network: string;
  intervals: number[];
}

/** Entries by prefix length, then by the masked address (as a string of its bytes). */
type FamilyIndex = Map<number, Map<string, Ref[]>>;

interface Index {
  v4: FamilyIndex;
  v6: FamilyIndex;
  /** The prefix lengths present, longest first (most specific entries first). */
  v4Lengths: number[];
  v6Lengths: number[];
  asns: Map<number, Ref[]>;
}

/** A History over decoded data (the index for past times is built at its first use). */
export function createHistory(data: HistoryData): History {
  const { runs, lists } = data;
  const iso = (run: number) => new Date(runs[run]! * 1000).toISOString();
  let index: Index | null = null;

  const runAt = (time: Date): number => {
    const t = time.getTime() / 1000;
    let lo = 0;
    let hi = runs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (runs[mid]! <= t) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };

  return {
    start: new Date(data.start * 1000),
    updated: new Date(runs.at(-1)! * 1000),
    seen(source, network) {
      const intervals = network === null ? undefined : lists[source]?.entries[network];
      if (!intervals) return null;
      return {
        firstSeen: iso(intervals[0]!),
        lastSeen: iso(isOpen(intervals) ? runs.length - 1 : intervals.at(-1)! - 1),
      };
    },
    runAt,
    listsAt(time) {
      index ??= buildIndex(data);
      const run = runAt(time);
      const providers = new Map<string, string>();
      const installed = new Set<string>();
      const kinds = new Set<RiskKind>();
      for (const [name, list] of Object.entries(lists)) {
        if (run === -1 || !listedAt(list.installed, run)) continue;
        installed.add(name);
        kinds.add(list.kind);
        if (list.provider) providers.set(name, list.provider);
      }
      const live = (ref: Ref) => installed.has(ref.source) && listedAt(ref.intervals, run);
      const found = matchesAt(index, live);
      const membership = (kind: RiskKind): FeedMembership | null => {
        if (!kinds.has(kind)) return null;
        const matches = (ip: ParsedIp, asn: number | null) =>
          found(ip, asn).filter((r) => r.kind === kind).map((r): FeedMatch => ({
            source: r.source,
            network: r.network,
          }));
        return { matches, has: (ip, asn) => matches(ip, asn).length > 0 };
      };
      return {
        memberships: {
          tor: membership("tor"),
          vpn: membership("vpn"),
          hosting: membership("hosting"),
          threat: membership("threat"),
          relay: membership("relay"),
          allow: membership("allow"),
        },
        providers,
      };
    },
  };
}

/** Every live entry covering an address (the most specific first); the last address's answer is kept. */
function matchesAt(index: Index, live: (ref: Ref) => boolean) {
  let lastIp: ParsedIp | null = null;
  let lastAsn: number | null = null;
  let last: Ref[] = [];
  return (ip: ParsedIp, asn: number | null): Ref[] => {
    if (ip === lastIp && asn === lastAsn) return last;
    const v4 = ip.bytes.length === 4;
    const family = v4 ? index.v4 : index.v6;
    const found: Ref[] = [];
    for (const length of v4 ? index.v4Lengths : index.v6Lengths) {
      for (const ref of family.get(length)!.get(maskedKey(ip.bytes, length)) ?? []) {
        if (live(ref)) found.push(ref);
      }
    }
    for (const ref of (asn === null ? undefined : index.asns.get(asn)) ?? []) {
      if (live(ref)) found.push(ref);
    }
    lastIp = ip;
    lastAsn = asn;
    last = found;
    return found;
  };
}

/** The first `length` bits of an address, as a string of its bytes (a map key). */
function maskedKey(bytes: Uint8Array, length: number): string {
  let key = "";
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.min(8, Math.max(0, length - 8 * i));
    key += String.fromCharCode(bytes[i]! & (0xff00 >> keep));
  }
  return key;
}

/** Places every entry of every list (a range as the CIDRs that cover it exactly). */
function buildIndex(data: HistoryData): Index {
  const index: Index = {
    v4: new Map(),
    v6: new Map(),
    v4Lengths: [],
    v6Lengths: [],
    asns: new Map(),
  };
  const add = (address: string, length: number | null, ref: Ref) => {
    const ip = parseIp(address);
    const v4 = ip.version === 4;
    const bits = length ?? (v4 ? 32 : 128);
    const family = v4 ? index.v4 : index.v6;
    let byKey = family.get(bits);
    if (!byKey) family.set(bits, byKey = new Map());
    const key = maskedKey(ip.bytes, bits);
    const refs = byKey.get(key);
    if (refs) refs.push(ref);
    else byKey.set(key, [ref]);
  };
  for (const [source, list] of Object.entries(data.lists)) {
    for (const [network, intervals] of Object.entries(list.entries)) {
      const ref: Ref = { source, kind: list.kind, network, intervals };
      try {
        if (/^AS\d+$/.test(network)) {
          const asn = Number(network.slice(2));
          const refs = index.asns.get(asn);
          if (refs) refs.push(ref);
          else index.asns.set(asn, [ref]);
        } else if (network.includes("-")) {
          const [first, last] = network.split("-") as [string, string];
          for (const [address, length] of rangeCidrs(first, last)) add(address, length, ref);
        } else {
          const [address, length] = network.split("/");
          add(address!, length === undefined ? null : Number(length), ref);
        }
      } catch {
        // An entry the feed parsers accepted always parses; anything else cannot match.
      }
    }
  }
  const longestFirst = (family: FamilyIndex) => [...family.keys()].sort((a, b) => b - a);
  index.v4Lengths = longestFirst(index.v4);
  index.v6Lengths = longestFirst(index.v6);
  return index;
}
