/**
 * How big the security-list history gets: a year of daily updates of the
 * default feeds, simulated on the real feed snapshots, through the recorder
 * the update uses (src/data/history/record.ts) and the file encoding it writes.
 *
 *   deno run -A bench/history_size.ts [--days 365] [--churn 1] [--feeds DIR]
 *
 * Each snapshot stands for its default source (data/sources.json) at day 0.
 * Every day, each list loses a share of its entries and gains as many (cloud
 * ranges only grow); part of what it gains is entries it dropped before
 * (relays and attackers come back), the rest new entries of the same shape
 * (a random host in the /16 of an entry of the list, the entry's prefix
 * length kept). The daily shares, per list, are in CHURN below with why;
 * `--churn 3` triples them all (the pessimistic bracket).
 */

import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { createHistory } from "../src/data/history/history.ts";
import { decodeHistory, emptyHistory, encodeHistory } from "../src/data/history/history_file.ts";
import { advanceHistory, keysOf, type ListState } from "../src/data/history/record.ts";
import type { RiskKind } from "../src/data/risk/security.ts";
import type { SourceFormat } from "../src/data/sources/manifest.ts";
import { parseFeed } from "../src/data/update/feed_parse.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "365" },
    churn: { type: "string", default: "1" },
    feeds: { type: "string" },
    seed: { type: "string", default: "34" },
    out: { type: "string" },
  },
});
const DAYS = Number(values.days);
const FACTOR = Number(values.churn);

/**
 * Daily churn per list: `out` the share of entries dropped a day, `in` the share added,
 * `back` the share of the additions that are earlier entries coming back.
 */
interface Churn {
  out: number;
  in: number;
  back: number;
}
const CHURN: Record<string, Churn> = {
  // Exits go up and down with their relays: a few percent of the list changes daily, and
  // many come back. (Of the 1,204 exits of the 2021 FireHOL snapshot, 412 are still in the
  // 2023 Tor bulk list: a stable core besides the flapping ones.)
  "tor": { out: 0.03, in: 0.03, back: 0.5 },
  // IPsum is rebuilt daily from the day's blocklists: most churn of all.
  "ipsum": { out: 0.2, in: 0.2, back: 0.3 },
  // FireHOL level 1 and Spamhaus DROP: hijacked and bogon ranges, slow to change.
  "firehol": { out: 0.01, in: 0.01, back: 0.2 },
  "drop": { out: 0.002, in: 0.002, back: 0.1 },
  // X4BNet VPN and data-centre lists: weekly commits, small diffs.
  "x4bnet": { out: 0.005, in: 0.005, back: 0.2 },
  // Cloud providers' published ranges: grow slowly, rarely shrink.
  "cloud": { out: 0.0002, in: 0.001, back: 0 },
  // Private Relay egress ranges: re-published often, moderate changes.
  "relay": { out: 0.01, in: 0.01, back: 0.3 },
};

/** The default sources (data/sources.json) and the snapshot standing for each. */
const SOURCES: {
  name: string;
  kind: RiskKind;
  format: SourceFormat;
  file: string;
  /** Its churn, a key of CHURN. */
  profile: string;
}[] = [
  {
    name: "tor-exits",
    kind: "tor",
    format: "ip-list",
    file: "tor_bulk_exit_list.txt",
    profile: "tor",
  },
  {
    name: "x4bnet-vpn-ipv4",
    kind: "vpn",
    format: "ip-list",
    file: "x4bnet_vpn_ipv4.txt",
    profile: "x4bnet",
  },
  {
    name: "x4bnet-vpn-ipv6",
    kind: "vpn",
    format: "ip-list",
    file: "x4bnet_vpn_ipv6.txt",
    profile: "x4bnet",
  },
  {
    name: "firehol-level1",
    kind: "threat",
    format: "ip-list",
    file: "firehol_level1.netset",
    profile: "firehol",
  },
  {
    name: "spamhaus-drop-v4",
    kind: "threat",
    format: "drop-json",
    file: "spamhaus_drop_v4.json",
    profile: "drop",
  },
  // The snapshot is DROPv6's older text form: the same entries.
  {
    name: "spamhaus-drop-v6",
    kind: "threat",
    format: "ip-list",
    file: "spamhaus_dropv6.txt",
    profile: "drop",
  },
  { name: "ipsum", kind: "threat", format: "ipsum", file: "stamparm_ipsum.txt", profile: "ipsum" },
  {
    name: "x4bnet-datacenter-ipv4",
    kind: "hosting",
    format: "ip-list",
    file: "x4bnet_datacenter_ipv4.txt",
    profile: "x4bnet",
  },
  {
    name: "x4bnet-datacenter-ipv6",
    kind: "hosting",
    format: "ip-list",
    file: "x4bnet_datacenter_ipv6.txt",
    profile: "x4bnet",
  },
  {
    name: "aws",
    kind: "hosting",
    format: "aws-json",
    file: "aws_ip-ranges.json",
    profile: "cloud",
  },
  {
    name: "google-cloud",
    kind: "hosting",
    format: "google-json",
    file: "google_cloud.json",
    profile: "cloud",
  },
  {
    name: "oracle-cloud",
    kind: "hosting",
    format: "oracle-json",
    file: "oracle_public_ip_ranges.json",
    profile: "cloud",
  },
  {
    name: "azure",
    kind: "hosting",
    format: "azure-json",
    file: "azure_servicetags_public.json",
    profile: "cloud",
  },
  {
    name: "cloudflare-ipv4",
    kind: "hosting",
    format: "ip-list",
    file: "cloudflare_ips-v4.txt",
    profile: "cloud",
  },
  {
    name: "cloudflare-ipv6",
    kind: "hosting",
    format: "ip-list",
    file: "cloudflare_ips-v6.txt",
    profile: "cloud",
  },
  {
    name: "icloud-private-relay",
    kind: "relay",
    format: "geofeed",
    file: "icloud_private_relay_egress-ip-ranges.csv",
    profile: "relay",
  },
];

const feedsDir = values.feeds ?? await firstDir([
  new URL("../../shared/data/feeds/", import.meta.url).pathname,
  new URL("../tests/fixtures/feeds/", import.meta.url).pathname,
]);

/** A small seeded generator (mulberry32): the same run every time. */
let seed = Number(values.seed) >>> 0;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** A new entry shaped like `model`: a random network of its prefix length in its /16 (IPv6: /32). */
function newEntryLike(model: string): string {
  const [address, length] = model.split("/") as [string, string | undefined];
  if (address.includes(":")) {
    const groups = address.split(":").filter(Boolean).slice(0, 2);
    const hex = () => Math.floor(random() * 0x10000).toString(16);
    return `${groups.join(":")}:${hex()}:${hex()}::/${Math.max(Number(length ?? 64), 64)}`;
  }
  const bits = Number(length ?? 32);
  const octets = address.split(".").map(Number);
  const base = ((octets[0]! << 24) | (octets[1]! << 16)) >>> 0;
  const host = Math.floor(random() * 0x10000);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const value = ((base | host) & mask) >>> 0;
  const text = [24, 16, 8, 0].map((s) => (value >>> s) & 255).join(".");
  return length === undefined ? text : `${text}/${bits}`;
}

interface Simulated {
  current: Set<string>;
  dropped: string[];
  churn: Churn;
}

const lists = new Map<string, Simulated & (typeof SOURCES)[number]>();
for (const source of SOURCES) {
  const text = await Deno.readTextFile(`${feedsDir}/${source.file}`);
  const feed = parseFeed(source.format, text, source.name);
  const churn = CHURN[source.profile]!;
  lists.set(source.name, {
    ...source,
    current: keysOf(feed),
    dropped: [],
    churn: { out: churn.out * FACTOR, in: churn.in * FACTOR, back: churn.back },
  });
}

/** One day of churn on a list: distinct entries dropped, then comebacks and new entries added. */
function churnDay(list: Simulated): void {
  const entries = [...list.current];
  const out = Math.round(entries.length * list.churn.out);
  const add = Math.round(entries.length * list.churn.in);
  for (let i = 0; i < out; i++) {
    // A partial shuffle: `out` distinct entries, so the list keeps its size.
    const j = i + Math.floor(random() * (entries.length - i));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    list.current.delete(entries[i]!);
    list.dropped.push(entries[i]!);
  }
  for (let added = 0, tries = 0; added < add && tries < add * 10; tries++) {
    const size = list.current.size;
    if (list.dropped.length && random() < list.churn.back) {
      const at = Math.floor(random() * list.dropped.length);
      list.current.add(list.dropped[at]!);
      list.dropped[at] = list.dropped.at(-1)!;
      list.dropped.pop();
    } else list.current.add(newEntryLike(pick(entries)));
    if (list.current.size > size) added++;
  }
}

const START = Date.UTC(2026, 0, 1) / 1000;
const history = emptyHistory(365);
let version = 0;
const states = () =>
  new Map<string, ListState>(
    [...lists].map(([name, list]) => {
      const keys = [...list.current];
      return [name, {
        kind: list.kind,
        sha256: `v${++version}`, // every list changed: all are read, as a real daily update does
        content: () => ({ networks: keys, ranges: [], asns: [] }),
      }];
    }),
  );

const started = performance.now();
const day0 = advanceHistory(history, states(), START, 365);
const firstBytes = encodeHistory(history).length;
const firstEntries = day0.entered;
let changes = 0;
for (let day = 1; day <= DAYS; day++) {
  for (const list of lists.values()) churnDay(list);
  const c = advanceHistory(history, states(), START + day * 86_400, 365);
  changes += c.entered + c.left;
  if (day % 30 === 0) {
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    const listed = [...lists.values()].map((l) => `${l.name} ${l.current.size}`).join(", ");
    console.error(`day ${day}: ${encodeHistory(history).length} bytes (${seconds} s); ${listed}`);
  }
}
const recordSeconds = (performance.now() - started) / 1000;

const bytes = encodeHistory(history);
if (values.out) await Deno.writeFile(values.out, bytes); // to measure a server's load of it
const json = JSON.stringify(history);
let entries = 0;
let numbers = 0;
for (const list of Object.values(history.lists)) {
  for (const intervals of Object.values(list.entries)) {
    entries++;
    numbers += intervals.length;
  }
}
const loadStarted = performance.now();
const loaded = createHistory(decodeHistory(bytes, "simulated"));
loaded.listsAt(new Date((START + 100 * 86_400) * 1000)); // builds the index
const loadMs = performance.now() - loadStarted;

const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`feeds: ${feedsDir}`);
console.log(`churn factor ${FACTOR}, ${DAYS} daily updates, 365 days kept`);
console.log(
  `day 0: ${firstEntries} entries, file ${kib(firstBytes)} (${
    (firstBytes / firstEntries).toFixed(1)
  } bytes an entry)`,
);
console.log(
  `after ${DAYS} days: ${entries} entries (${changes} entered/left events), ${numbers} interval numbers, ${history.runs.length} runs`,
);
console.log(
  `file ${kib(bytes.length)} gzipped (${kib(json.length)} as JSON; gzip -9 of the JSON alone ${
    kib(gzipSync(json, { level: 9 }).length)
  }): ${(bytes.length / entries).toFixed(1)} bytes an entry, ${
    (bytes.length / changes).toFixed(1)
  } bytes a change`,
);
console.log(
  `time (loaded machine, indicative only): recording ${recordSeconds.toFixed(1)} s for ${
    DAYS + 1
  } updates; load + index ${loadMs.toFixed(0)} ms`,
);

async function firstDir(dirs: string[]): Promise<string> {
  for (const dir of dirs) {
    try {
      if ((await Deno.stat(dir)).isDirectory) return dir;
    } catch {
      // next
    }
  }
  throw new Error(`No feed snapshots in ${dirs.join(" or ")}: pass --feeds DIR`);
}
