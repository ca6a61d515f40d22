/**
 * Lookups per second of the full lookup core against raw mmdb-lib `get()`.
 *
 * Run: `deno task bench` (deno bench --allow-read --allow-env bench/lookup_bench.ts).
 *
 * Every bench iteration looks up the same 10,000 random public addresses
 * (bench/_addresses.ts, seed 1, ~80% IPv4 / ~20% IPv6, only addresses the
 * City database knows), so lookups/s = 10,000 / time per iteration and the
 * time per lookup = time per iteration / 10,000. All benches are one group
 * with raw City `get()` as the baseline: deno bench's summary prints how many
 * times faster or slower each is.
 *
 * - raw get(): `new Reader(buffer)` from mmdb-lib with no cache option: tree
 *   walk plus a full decode of every record, the way a plain mmdb-lib server
 *   would do it.
 * - cold: per iteration a fresh data set (new readers with empty record
 *   caches over the already-read bytes, via openMmdb) and a fresh
 *   createLookup; only the 10,000 lookups are timed (BenchContext start/end).
 *   The country and time-zone caches are the start-up-warmed ones the server
 *   uses (createEnrichment({ warm: true })).
 *   Within an iteration, values shared between records (continents,
 *   countries...) are decoded once and then come from the cache.
 * - warm: one lookup, pre-warmed on the same 10,000 addresses.
 *
 * Each lookup passes a browser user agent, as a real request would (the
 * parser caches it, so after the first call it is a cache hit).
 *
 * Issue goal: warm ≥ 3× raw get(), cold ≥ 0.8× raw get().
 *
 * Env: IPINTEL_DATA_DIR (default ./data), BENCH_ADDRESSES (default 10000).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { createEnrichment } from "../src/core/place/warm.ts";
import { dataVersion } from "../src/data/sources/data_version.ts";
import { createLookup, type Lookup } from "../src/core/lookup/lookup.ts";
import { openMmdb } from "../src/data/mmdb/reader.ts";
import type { DataSet } from "../src/data/sources/data_set.ts";
import type { AsnRecord, CityRecord } from "../src/data/mmdb/records.ts";
import { createUserAgentParser } from "../src/core/ua/parse.ts";
import { NO_FEEDS } from "../src/data/risk/security.ts";
import { readManifest } from "../src/data/sources/manifest.ts";
import { randomPublicAddresses } from "./_addresses.ts";

const DATA_DIR = Deno.env.get("IPINTEL_DATA_DIR") ??
  new URL("../data", import.meta.url).pathname;
const COUNT = Number(Deno.env.get("BENCH_ADDRESSES") ?? 10_000);
/** The record cache size the server uses by default (IPINTEL_CACHE_SIZE). */
const CACHE_SIZE = 100_000;
const USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
  "Chrome/120.0.0.0 Safari/537.36";

const maybeManifest = await readManifest(DATA_DIR);
if (!maybeManifest) throw new Error(`No manifest.json in ${DATA_DIR}: run "deno task data"`);
const manifest = maybeManifest;
const fileOf = (kind: string): string => {
  const entry = manifest.sources.find((s) => s.kind === kind);
  if (!entry) throw new Error(`${DATA_DIR}/manifest.json lists no ${kind} database`);
  return `${DATA_DIR}/${entry.file}`;
};
const cityBytes = await Deno.readFile(fileOf("city"));
const asnBytes = await Deno.readFile(fileOf("asn"));

// Raw mmdb-lib readers, no cache option: every get() walks the tree and decodes.
// deno-lint-ignore no-explicit-any
const rawCity = new Reader<any>(
  Buffer.from(cityBytes.buffer, cityBytes.byteOffset, cityBytes.byteLength),
);
// deno-lint-ignore no-explicit-any
const rawAsn = new Reader<any>(
  Buffer.from(asnBytes.buffer, asnBytes.byteOffset, asnBytes.byteLength),
);

const addresses = randomPublicAddresses(COUNT, 1, { keep: (ip) => rawCity.get(ip) !== null });

// The server warms the country and time-zone caches at start-up (createEnrichment),
// so a cold lookup finds ICU's formatters ready but every record cache empty.
const enrichment = createEnrichment({ warm: true });

function freshLookup(): Lookup {
  const data: DataSet = {
    incomplete: null,
    city: openMmdb<CityRecord>(cityBytes, { cacheSize: CACHE_SIZE }),
    asn: openMmdb<AsnRecord>(asnBytes, { cacheSize: CACHE_SIZE }),
    isp: null,
    connectionType: null,
    domain: null,
    anonymousIp: null,
    risk: NO_FEEDS,
    manifest,
    version: dataVersion(manifest),
    installed: [],
    absent: [],
  };
  return createLookup({
    data,
    now: () => new Date(),
    parseUserAgent: createUserAgentParser(),
    enrichment,
  });
}

/** Looks up every address; returns a number that depends on every result. */
function runLookups(lookup: Lookup): number {
  let sink = 0;
  for (const ip of addresses) {
    const result = lookup.find(ip, { userAgent: USER_AGENT });
    sink += result.geoLocation.accuracy_radius ?? 0;
    sink += result.timezone.offset ?? 0;
  }
  return sink;
}

// deno-lint-ignore no-explicit-any
function runRaw(reader: Reader<any>): number {
  let sink = 0;
  for (const ip of addresses) if (reader.get(ip) !== null) sink++;
  return sink;
}

const warm = freshLookup();
runLookups(warm);

let blackhole = 0;
const group = `${COUNT} lookups per iteration`;

Deno.bench({
  name: "raw mmdb-lib get(), City, no cache",
  group,
  baseline: true,
  fn() {
    blackhole += runRaw(rawCity);
  },
});

Deno.bench({
  name: "raw mmdb-lib get(), ASN, no cache (context)",
  group,
  fn() {
    blackhole += runRaw(rawAsn);
  },
});

Deno.bench({
  name: "lookup core, cold (fresh caches each iteration)",
  group,
  fn(b) {
    const lookup = freshLookup();
    b.start();
    blackhole += runLookups(lookup);
    b.end();
  },
});

Deno.bench({
  name: "lookup core, warm",
  group,
  fn() {
    blackhole += runLookups(warm);
  },
});

globalThis.addEventListener("unload", () => {
  if (blackhole === -1) console.log(blackhole);
});
