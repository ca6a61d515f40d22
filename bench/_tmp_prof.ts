import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { createLookup, type Lookup } from "../src/lookup/lookup.ts";
import { openMmdb } from "../src/mmdb/reader.ts";
import type { DataSet } from "../src/sources/data_set.ts";
import type { AsnRecord, CityRecord } from "../src/sources/records.ts";
import { createUserAgentParser } from "../src/ua/parse.ts";
import { readManifest } from "../src/update/manifest.ts";
import { randomPublicAddresses } from "./_addresses.ts";
const manifest = (await readManifest("data"))!;
const cityBytes = Deno.readFileSync("data/GeoLite2-City.mmdb");
const asnBytes = Deno.readFileSync("data/asn.mmdb");
const raw = new Reader<any>(Buffer.from(cityBytes.buffer));
const addrs = randomPublicAddresses(10000, 1, { keep: (ip) => raw.get(ip) !== null });
const UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
function fresh(): Lookup {
  const data: DataSet = { city: openMmdb<CityRecord>(cityBytes, { cacheSize: 100000 }), asn: openMmdb<AsnRecord>(asnBytes, { cacheSize: 100000 }), manifest };
  return createLookup({ data, now: () => new Date(), parseUserAgent: createUserAgentParser({ cacheSize: 10000 }) });
}
const mode = Deno.args[0];
let sink = 0;
const t0 = performance.now();
let n = 0;
if (mode === "warm") {
  const l = fresh();
  for (const a of addrs) l(a, { userAgent: UA });
  const t = performance.now();
  while (performance.now() - t < 8000) { for (const a of addrs) sink += l(a, { userAgent: UA }).geoLocation.accuracy_radius ?? 0; n++; }
} else if (mode === "cold") {
  while (performance.now() - t0 < 8000) { const l = fresh(); for (const a of addrs) sink += l(a, { userAgent: UA }).geoLocation.accuracy_radius ?? 0; n++; }
} else {
  while (performance.now() - t0 < 8000) { for (const a of addrs) if (raw.get(a)) sink++; n++; }
}
console.log(mode, n, "iterations", ((performance.now() - t0) / n / addrs.length * 1000).toFixed(2), "µs/lookup", sink > -1);
