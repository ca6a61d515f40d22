import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { LruCache } from "../src/cache/lru.ts";
import { openMmdb } from "../src/mmdb/reader.ts";
import { randomPublicAddresses } from "./_addresses.ts";
const cityBytes = Deno.readFileSync("data/GeoLite2-City.mmdb");
const raw = new Reader<any>(Buffer.from(cityBytes.buffer));
const addrs = randomPublicAddresses(10000, 1, { keep: (ip) => raw.get(ip) !== null });
function time(name: string, f: () => void) {
  f(); f();
  const t = performance.now(); let n = 0;
  while (performance.now() - t < 2000) { f(); n++; }
  console.log(name.padEnd(40), ((performance.now() - t) / n / addrs.length * 1000).toFixed(3), "µs");
}
const city = openMmdb<any>(cityBytes, { cacheSize: 100000 });
const mapCache = new Map();
const rMap = new Reader<any>(Buffer.from(cityBytes.buffer), { cache: mapCache as any });
const lru = new LruCache<any, any>(100000);
const rLru = new Reader<any>(Buffer.from(cityBytes.buffer), { cache: lru });
let s = 0;
for (let round = 0; round < 2; round++) {
time("tree walk only (findAddressInTree)", () => { for (const a of addrs) s += (raw as any).findAddressInTree(a)[1]; });
time("raw get no cache", () => { for (const a of addrs) if (raw.get(a)) s++; });
time("openMmdb get (LRU) warm", () => { for (const a of addrs) if (city.get(a)) s++; });
time("Reader + plain Map cache warm", () => { for (const a of addrs) if (rMap.get(a)) s++; });
time("Reader + LruCache direct warm", () => { for (const a of addrs) if (rLru.get(a)) s++; });
}
console.log(s > 0, lru.size, mapCache.size);
