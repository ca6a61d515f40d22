import assert from "node:assert/strict";
import { openMmdb } from "../../../src/data/mmdb/reader.ts";
import type { FeedRecord } from "../../../src/data/mmdb/records.ts";
import { compileFeeds } from "../../../src/data/update/feed_compile.ts";
import { parseFeed } from "../../../src/data/update/feed_parse.ts";

/** The lists covering an address in the compiled tree: `source network` each, in record order. */
function matchesAt(tree: Uint8Array, ip: string): string[] {
  const record = openMmdb<FeedRecord>(tree).get(ip);
  return (record?.matches ?? []).map((m) => `${m.source} ${m.network}`);
}

Deno.test("compileFeeds() keeps every list covering each address, the most specific entry first", () => {
  const a = parseFeed("ip-list", "10.0.0.0/8\n10.0.0.0/8\n2001:db8::/32\n", "a");
  const b = parseFeed("ip-list", "10.1.0.0/16\n10.1.2.3\n", "b");
  const c = parseFeed("csv-ranges", "10.0.255.0,10.1.0.255\n", "c");
  const { tree } = compileFeeds("threat", [
    { name: "a", feed: a },
    { name: "b", feed: b },
    { name: "c", feed: c },
  ]);
  assert.deepEqual(matchesAt(tree!, "10.5.0.1"), ["a 10.0.0.0/8"]);
  assert.deepEqual(matchesAt(tree!, "10.0.255.7"), ["c 10.0.255.0-10.1.0.255", "a 10.0.0.0/8"]);
  assert.deepEqual(matchesAt(tree!, "10.1.0.9"), [
    "c 10.0.255.0-10.1.0.255",
    "b 10.1.0.0/16",
    "a 10.0.0.0/8",
  ]);
  assert.deepEqual(matchesAt(tree!, "10.1.2.3"), ["b 10.1.2.3", "b 10.1.0.0/16", "a 10.0.0.0/8"]);
  assert.deepEqual(matchesAt(tree!, "10.1.1.0"), ["b 10.1.0.0/16", "a 10.0.0.0/8"]);
  assert.deepEqual(matchesAt(tree!, "2001:db8:ffff::1"), ["a 2001:db8::/32"]);
  assert.deepEqual(matchesAt(tree!, "11.0.0.0"), []);
  assert.deepEqual(matchesAt(tree!, "9.255.255.255"), []);
});

Deno.test("compileFeeds() keeps a geofeed entry's place and names the lists of each AS number", () => {
  const geo = parseFeed("geofeed", "192.168.0.0/16,DE,DE-BE,Berlin,10115\n", "g");
  const { tree } = compileFeeds("location", [{ name: "g", feed: geo }]);
  assert.deepEqual(openMmdb<FeedRecord>(tree!).get("192.168.3.4")?.matches, [{
    source: "g",
    network: "192.168.0.0/16",
    country: "DE",
    region: "DE-BE",
    city: "Berlin",
    postal: "10115",
  }]);
  const { asns } = compileFeeds("hosting", [
    { name: "x", feed: parseFeed("asn-list", "AS16509\n13335\n", "x") },
    { name: "y", feed: parseFeed("asn-list", "13335\n", "y") },
  ]);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(asns!)), {
    "13335": ["x", "y"],
    "16509": ["x"],
  });
});

Deno.test("compileFeeds() refuses, naming the lists, past its entry and tree-size bounds", () => {
  const feeds = [
    { name: "x", feed: parseFeed("ip-list", "10.0.0.1\n10.0.0.3\n", "x") },
    { name: "y", feed: parseFeed("csv-ranges", "10.1.0.1,10.1.0.6\n", "y") },
  ];
  assert.ok(compileFeeds("threat", feeds, { maxEntries: 6, maxTreeBytes: 10_000 }).tree);
  // The range cuts into 4 CIDRs (.1/32, .2/31, .4/31, .6/32): 6 entries in all.
  assert.throws(
    () => compileFeeds("threat", feeds, { maxEntries: 5 }),
    /^Error: the threat lists \(x, y\) do not compile: the lists hold more than 5 networks \(a range counts as its CIDRs\)$/,
  );
  assert.throws(
    () => compileFeeds("threat", feeds, { maxTreeBytes: 100 }),
    /^Error: the threat lists \(x, y\) do not compile: the database would take \d+ MB \(\d+ tree nodes, \d+ MB of data\), more than 0 MB$/,
  );
});
