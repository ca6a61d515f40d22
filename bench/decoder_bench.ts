/**
 * Cost of reading a City record: our tree walk and data-section decoder
 * (src/data/mmdb/decoder.ts) against mmdb-lib's public `Reader.get()`, in one run.
 *
 * Run: `deno bench --allow-read --allow-env bench/decoder_bench.ts`.
 *
 * Every iteration reads the records of the same 10,000 random public addresses
 * the City database knows (bench/_addresses.ts, seed 1, ~80% IPv4); they hit
 * about 3,300 distinct records. Time per record = time per iteration / 10,000.
 * One group, mmdb-lib's `get()` the baseline, so deno bench's summary prints
 * each ratio:
 *
 * - mmdb-lib `get()`, no cache: address text → tree walk → full decode, the
 *   way a plain mmdb-lib server reads a record.
 * - `getBytes()` without a cache (`cacheSize: 0`): the same work on our side
 *   (address text parsed by `parseIp`, our walk, every value of the record
 *   decoded, nothing kept).
 * - decode only, values shared: the data offsets found beforehand, the values
 *   records share through pointers kept (the decoder's own table, warm), so
 *   only each record's own values are decoded: what a cache miss costs in the
 *   server once the shared values are cached.
 * - `getBytes()`, cold cache each pass: a fresh reader (cache of 100,000, the
 *   default) per pass, as at start-up: 10,000 lookups, about 3,300 decodes.
 * - `getBytes()` with the cache warm: what a server's lookup pays once its
 *   cache holds the record (walk + one cache hit).
 *
 * On a loaded machine read the ratios, not the times.
 *
 * Env: IPINTEL_DATA_DIR (default ./data), BENCH_ADDRESSES (default 10000).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { parseIp } from "../src/base/ip/parse.ts";
import { createDataDecoder } from "../src/data/mmdb/decoder.ts";
import { openMmdb } from "../src/data/mmdb/reader.ts";
import { createTreeWalk } from "../src/data/mmdb/tree.ts";
import { readManifest } from "../src/data/sources/manifest.ts";
import { randomPublicAddresses } from "./_addresses.ts";

const DATA_DIR = Deno.env.get("IPINTEL_DATA_DIR") ??
  new URL("../data", import.meta.url).pathname;
const COUNT = Number(Deno.env.get("BENCH_ADDRESSES") ?? 10_000);

const manifest = await readManifest(DATA_DIR);
const entry = manifest?.sources.find((s) => s.kind === "city");
if (!entry) throw new Error(`No City database in ${DATA_DIR}/manifest.json: run "deno task data"`);
const bytes = await Deno.readFile(`${DATA_DIR}/${entry.file}`);

// deno-lint-ignore no-explicit-any
const mmdbLib = new Reader<any>(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
const addresses = randomPublicAddresses(COUNT, 1, { keep: (ip) => mmdbLib.get(ip) !== null });

const uncached = openMmdb(bytes, { cacheSize: 0 });
const cached = openMmdb(bytes, { cacheSize: 100_000 });
const parsed = addresses.map((ip) => parseIp(ip).bytes);
for (const address of parsed) cached.getBytes(address);

const m = uncached.metadata;
const dataStart = (m.nodeCount * m.recordSize) / 4 + 16;
const walk = createTreeWalk(bytes, m);
const offsets = parsed.map((address) => walk(address) - m.nodeCount - 16);
const dataEnd = (() => {
  // The data section ends at the last metadata marker.
  const marker = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];
  outer: for (let i = bytes.length - marker.length; i >= 0; i--) {
    for (let j = 0; j < marker.length; j++) if (bytes[i + j] !== marker[j]) continue outer;
    return i;
  }
  throw new Error("no metadata marker");
})();
const warmDecoder = createDataDecoder(bytes, dataStart, dataEnd);
for (const offset of offsets) warmDecoder(offset);

let blackhole = 0;
const group = `${COUNT} City records per iteration`;

Deno.bench({
  name: "mmdb-lib Reader.get(), no cache",
  group,
  baseline: true,
  fn() {
    for (const ip of addresses) if (mmdbLib.get(ip) !== null) blackhole++;
  },
});

Deno.bench({
  name: "getBytes(parseIp()), no cache",
  group,
  fn() {
    for (const ip of addresses) if (uncached.getBytes(parseIp(ip).bytes) !== null) blackhole++;
  },
});

Deno.bench({
  name: "decode only, values shared",
  group,
  fn() {
    for (const offset of offsets) if (warmDecoder(offset) !== null) blackhole++;
  },
});

Deno.bench({
  name: "getBytes(), cold cache each pass",
  group,
  fn(b) {
    const db = openMmdb(bytes, { cacheSize: 100_000 });
    b.start();
    for (const address of parsed) if (db.getBytes(address) !== null) blackhole++;
    b.end();
  },
});

Deno.bench({
  name: "getBytes(), cache warm (walk + hit)",
  group,
  fn() {
    for (const address of parsed) if (cached.getBytes(address) !== null) blackhole++;
  },
});

globalThis.addEventListener("unload", () => {
  if (blackhole === -1) console.log(blackhole);
});
