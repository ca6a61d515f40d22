/**
 * A data set for the gate: the shared City and ASN fixtures plus places for
 * addresses of the real feed fixtures (Tor exits, a VPN range, a Cloudflare
 * range, a FireHOL network), and those feeds compiled by the project's own
 * feed compiler, as `data update` installs them.
 */

import { ASN_FIXTURES, CITY_FIXTURES, FIXED_NOW, openedOnce } from "../../_helpers.ts";
import { type MmdbValue, MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import type { DataSet } from "../../../src/data/sources/data_set.ts";
import {
  type FeedKind,
  type ManifestEntry,
  type SourceFormat,
  writeManifest,
} from "../../../src/data/sources/manifest.ts";
import { compileFeeds, feedDatabaseType } from "../../../src/data/update/feed_compile.ts";
import { parseFeed } from "../../../src/data/update/feed_parse.ts";

const FEEDS = new URL("../../fixtures/feeds/", import.meta.url).pathname;

const names = (en: string) => ({ en });
const continent = (code: string, name: string) => ({ code, names: names(name) });
const EU = continent("EU", "Europe");
const place = (iso: string, name: string, where = EU) => ({
  continent: where,
  country: { iso_code: iso, names: names(name) },
});

/** Places for the feed fixtures' addresses (and an embargoed country), by network. */
export const GATE_CITY: Record<string, { [key: string]: MmdbValue }> = {
  ...CITY_FIXTURES,
  "185.220.101.0/24": place("DE", "Germany"), // Tor exits .4, .34, .82
  "192.42.116.0/24": place("NL", "Netherlands"), // Tor exits .187, .196
  "2.26.157.0/24": place("GB", "United Kingdom"), // X4BNet VPN
  "173.245.48.0/20": place("US", "United States", continent("NA", "North America")), // Cloudflare
  "8.8.8.0/24": place("US", "United States", continent("NA", "North America")),
  "1.10.16.0/20": place("CN", "China", continent("AS", "Asia")), // FireHOL level 1
  "175.45.176.0/22": place("KP", "North Korea", continent("AS", "Asia")),
  // Googlebot (66.249.66.0/27 is in its published ranges), AWS, a bingbot range.
  "66.249.64.0/19": place("US", "United States", continent("NA", "North America")),
  "2001:4860:4801::/48": place("US", "United States", continent("NA", "North America")),
  "3.5.140.0/22": place("KR", "South Korea", continent("AS", "Asia")),
  "157.55.39.0/24": place("US", "United States", continent("NA", "North America")),
};

const as = (number: number, organization: string) => ({
  autonomous_system_number: number,
  autonomous_system_organization: organization,
});

export const GATE_ASN: Record<string, { [key: string]: MmdbValue }> = {
  ...ASN_FIXTURES,
  "185.220.101.0/24": as(60729, "Stiftung Erneuerbare Freiheit"),
  "192.42.116.0/24": as(1101, "SURF B.V."),
  "2.26.157.0/24": as(5089, "Virgin Media Limited"),
  "173.245.48.0/20": as(13335, "Cloudflare, Inc."),
  "8.8.8.0/24": as(15169, "Google LLC"),
  "1.10.16.0/20": as(4134, "Chinanet"),
  "175.45.176.0/22": as(131279, "Ryugyong-dong"),
  "66.249.64.0/19": as(15169, "Google LLC"),
  "2001:4860:4801::/48": as(15169, "Google LLC"),
  "3.5.140.0/22": as(16509, "Amazon.com, Inc."),
  "157.55.39.0/24": as(8075, "Microsoft Corporation"),
};

/** A feed fixture installed: its name, kind and file (under tests/fixtures/feeds/). */
export interface GateFeed {
  name: string;
  kind: FeedKind;
  file: string;
  /** How the file is read (default `ip-list`). */
  format?: SourceFormat;
  /** Crawler lists: their crawler, operator and user-agent tokens. */
  crawler?: { crawler: string; operator: string; userAgents: string[] };
}

/** The feed fixtures installed, by kind. */
export const GATE_FEEDS: GateFeed[] = [
  { name: "tor-exits", kind: "tor", file: "tor_bulk_exit_list.txt" },
  { name: "x4bnet-vpn-ipv4", kind: "vpn", file: "x4bnet_vpn_ipv4.txt" },
  { name: "cloudflare-ipv4", kind: "hosting", file: "cloudflare_ips-v4.txt" },
  { name: "firehol-level1", kind: "threat", file: "firehol_level1.netset" },
];

/**
 * The crawler gate's feeds: X4BNet's data-centre list (trimmed to the blocks of the
 * crawlers' addresses), AWS's ranges, and Googlebot's and bingbot's published ranges.
 */
export const CRAWLER_GATE_FEEDS: GateFeed[] = [
  { name: "x4bnet-datacenter-ipv4", kind: "hosting", file: "crawlers/x4bnet_datacenter_ipv4.txt" },
  { name: "aws", kind: "hosting", file: "aws_ip-ranges.json", format: "aws-json" },
  {
    name: "google-googlebot",
    kind: "crawler",
    file: "crawlers/googlebot-ipv4.txt",
    crawler: { crawler: "Googlebot", operator: "Google", userAgents: ["Googlebot"] },
  },
  {
    name: "bing-bingbot",
    kind: "crawler",
    file: "crawlers/bing-ipv4.txt",
    crawler: { crawler: "bingbot", operator: "Microsoft", userAgents: ["bingbot"] },
  },
];

function database(type: string, records: Record<string, { [key: string]: MmdbValue }>) {
  const writer = new MmdbWriter({ databaseType: type, languages: ["en"] });
  for (const [network, record] of Object.entries(records)) writer.insertNetwork(network, record);
  return writer.toBytes();
}

/** Writes the gate's data directory into a new temp dir; the caller removes it. */
export async function writeGateDataDir(feeds: readonly GateFeed[] = GATE_FEEDS): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-gate-" });
  const entry = (kind: ManifestEntry["kind"], file: string, databaseType: string) => ({
    name: `test-${kind}`,
    kind,
    file,
    sha256: "",
    source: "test fixture",
    license: "test",
    attribution: "test",
    built: FIXED_NOW.toISOString(),
    databaseType,
  });
  const entries: ManifestEntry[] = [];
  await Deno.writeFile(`${dir}/city.mmdb`, database("GeoLite2-City", GATE_CITY));
  entries.push(entry("city", "city.mmdb", "GeoLite2-City"));
  await Deno.writeFile(`${dir}/asn.mmdb`, database("GeoLite2-ASN", GATE_ASN));
  entries.push(entry("asn", "asn.mmdb", "GeoLite2-ASN"));
  // One tree per kind, of every list of the kind (as `data update` compiles them).
  for (const kind of new Set(feeds.map((f) => f.kind))) {
    const lists = feeds.filter((f) => f.kind === kind);
    const parsed = await Promise.all(lists.map(async (f) => ({
      name: f.name,
      feed: parseFeed(f.format ?? "ip-list", await Deno.readTextFile(`${FEEDS}${f.file}`), f.file),
    })));
    const { tree } = compileFeeds(kind, parsed);
    const file = `${kind}.mmdb`;
    await Deno.writeFile(`${dir}/${file}`, tree!);
    for (const feed of lists) {
      entries.push({
        ...entry(kind, file, feedDatabaseType(kind)),
        name: feed.name,
        format: feed.format ?? "ip-list",
        ...feed.crawler,
      });
    }
  }
  await writeManifest(dir, { sources: entries });
  return dir;
}

/** The gate's data set, built once per test process. */
export const gateDataSet: () => Promise<DataSet> = openedOnce(writeGateDataDir);
