import { LruCache } from "../src/cache/lru.ts";
for (const n of [1000, 2315, 8000, 14523, 16000, 17000, 40000]) {
  const c = new LruCache<number, unknown>(100000);
  const keys = Array.from({ length: n }, (_, i) => i * 37 + 1000000);
  for (const k of keys) c.set(k, { k });
  const seq: number[] = []; for (let i = 0; i < 100000; i++) seq.push(keys[(Math.imul(i, 2654435761) >>> 0) % n]!);
  let s = 0; const t = performance.now();
  for (let r = 0; r < 20; r++) for (const k of seq) if (c.get(k)) s++;
  const t2 = performance.now();
  const m = new Map<number, unknown>(keys.map((k) => [k, { k }]));
  for (let r = 0; r < 20; r++) for (const k of seq) if (m.get(k)) s++;
  console.log(n, ((t2 - t) / 2e6 * 1e6).toFixed(3), "µs/get LRU;", ((performance.now() - t2) / 2e6 * 1e6).toFixed(3), "µs plain Map.get");
}
