import assert from "node:assert/strict";
import { LruCache } from "../../../src/base/cache/lru.ts";

Deno.test("LruCache returns stored values and undefined for missing keys", () => {
  const c = new LruCache<string, number>(3);
  c.set("a", 1);
  c.set("b", 2);
  assert.equal(c.get("a"), 1);
  assert.equal(c.get("b"), 2);
  assert.equal(c.get("z"), undefined);
  assert.equal(c.size, 2);
  assert.equal(c.max, 3);
});

Deno.test("LruCache evicts the least recently set entry when full", () => {
  const c = new LruCache<string, number>(2);
  c.set("a", 1);
  c.set("b", 2);
  c.set("c", 3);
  assert.equal(c.size, 2);
  assert.equal(c.has("a"), false);
  assert.equal(c.get("b"), 2);
  assert.equal(c.get("c"), 3);
});

Deno.test("LruCache get marks an entry as recently used", () => {
  const c = new LruCache<string, number>(2);
  c.set("a", 1);
  c.set("b", 2);
  c.get("a"); // now b is the oldest
  c.set("c", 3);
  assert.deepEqual([c.has("a"), c.has("b"), c.has("c")], [true, false, true]);
});

Deno.test("LruCache set on an existing key replaces it without growing or evicting", () => {
  const c = new LruCache<string, number>(2);
  c.set("a", 1);
  c.set("b", 2);
  c.set("a", 10); // a becomes the newest
  assert.equal(c.size, 2);
  assert.equal(c.get("a"), 10);
  c.set("c", 3);
  assert.deepEqual([c.has("a"), c.has("b"), c.has("c")], [true, false, true]);
});

Deno.test("LruCache has does not change recency", () => {
  const c = new LruCache<string, number>(2);
  c.set("a", 1);
  c.set("b", 2);
  assert.equal(c.has("a"), true);
  c.set("c", 3);
  assert.equal(c.has("a"), false);
});

Deno.test("LruCache keeps undefined and null values apart from misses", () => {
  const c = new LruCache<string, number | undefined | null>(3);
  c.set("u", undefined);
  c.set("n", null);
  assert.equal(c.has("u"), true);
  assert.equal(c.get("u"), undefined);
  assert.equal(c.get("n"), null);
  c.get("u"); // refreshes u: n is now the oldest
  c.set("x", 1);
  c.set("y", 2);
  assert.deepEqual([c.has("u"), c.has("n")], [true, false]);
});

Deno.test("LruCache delete and clear remove entries", () => {
  const c = new LruCache<number, string>(5);
  for (let k = 0; k < 5; k++) c.set(k, String(k));
  assert.equal(c.delete(2), true);
  assert.equal(c.delete(2), false);
  assert.equal(c.size, 4);
  c.clear();
  assert.equal(c.size, 0);
  assert.equal(c.get(0), undefined);
});

Deno.test("LruCache with max 0 stores nothing", () => {
  const c = new LruCache<string, number>(0);
  c.set("a", 1);
  assert.equal(c.size, 0);
  assert.equal(c.get("a"), undefined);
});

Deno.test("LruCache stays bounded under many distinct keys", () => {
  const c = new LruCache<number, number>(100);
  for (let k = 0; k < 10_000; k++) {
    c.set(k, k);
    assert.ok(c.size <= 100);
  }
  assert.equal(c.size, 100);
  // Exactly the 100 newest remain.
  for (let k = 9_900; k < 10_000; k++) assert.equal(c.get(k), k);
  assert.equal(c.has(9_899), false);
});

const BAD_SIZES: { input: number }[] = [
  { input: -1 },
  { input: 1.5 },
  { input: Number.NaN },
  { input: Number.POSITIVE_INFINITY },
];
for (const { input } of BAD_SIZES) {
  Deno.test(`LruCache rejects size ${input}`, () => {
    assert.throws(() => new LruCache(input), RangeError);
  });
}

Deno.test("LruCache with admitRepeatsOnly keeps its working set through keys met once", () => {
  const c = new LruCache<number, string>(3, { admitRepeatsOnly: true });
  for (const k of [1, 2, 3]) c.set(k, `v${k}`); // not full yet: stored at once
  for (let k = 100; k < 200; k++) c.set(k, "once"); // a stream of keys met once
  assert.deepEqual([c.has(1), c.has(2), c.has(3)], [true, true, true]);
  assert.equal(c.has(150), false);
  // A key met again is stored, evicting the least recently used.
  c.get(2);
  c.get(3);
  c.set(7, "first"); // refused: first time
  assert.equal(c.has(7), false);
  c.set(7, "again");
  assert.equal(c.get(7), "again");
  assert.equal(c.has(1), false);
  assert.equal(c.size, 3);
});

Deno.test("LruCache with admitRepeatsOnly forgets refused keys past its size", () => {
  const c = new LruCache<number, string>(2, { admitRepeatsOnly: true });
  c.set(1, "a");
  c.set(2, "b");
  c.set(10, "x"); // refused, remembered
  c.set(11, "y"); // refused, remembered (2 remembered: the bound)
  c.set(12, "z"); // the remembered keys are forgotten, 12 remembered
  c.set(10, "x"); // met before, but forgotten: refused again
  assert.equal(c.has(10), false);
  c.set(12, "z");
  assert.equal(c.has(12), true);
});

Deno.test("LruCache.offer makes the value only when the key is stored", () => {
  const c = new LruCache<string, { v: string }>(2, { admitRepeatsOnly: true });
  let made = 0;
  const make = (v: string) => () => (made++, { v });
  c.offer("a", make("a"));
  c.offer("b", make("b"));
  assert.equal(made, 2); // not full yet: stored
  c.offer("c", make("c")); // full, met once: refused, nothing made
  assert.equal(made, 2);
  assert.equal(c.has("c"), false);
  c.offer("c", make("c2")); // met again: stored
  assert.equal(made, 3);
  assert.deepEqual(c.get("c"), { v: "c2" });
  c.offer("c", make("c3")); // held: replaced
  assert.deepEqual(c.get("c"), { v: "c3" });
});
