/**
 * IPv4-mapped networks (`::ffff:8.8.8.0/120`) in a list are the IPv4
 * networks they denote: compiled in prefix order with the rest, so the most
 * specific entry wins and every list naming an address is in its record
 * (they used to be applied after every IPv4 entry, overwriting them). Checked
 * with libmaxminddb's `mmdblookup` reading the compiled file (as well as
 * mmdb-lib), and against a model (every entry covering the address, the
 * smallest first) on random lists.
 */

import assert from "node:assert/strict";
import { openMmdb } from "../../../src/data/mmdb/reader.ts";
import type { FeedRecord } from "../../../src/data/mmdb/records.ts";
import { compileFeeds, type NamedFeed } from "../../../src/data/update/feed_compile.ts";
import { parseFeed } from "../../../src/data/update/feed_parse.ts";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { mmdblookup, MMDBLOOKUP_MISSING, mmdblookupAvailable } from "../../_mmdblookup.ts";
import { seededRandom } from "../../_random.ts";
import { ignoredName } from "../../_skip.ts";

const missing = mmdblookupAvailable() ? null : MMDBLOOKUP_MISSING;

/** `source network [city]` of each match at each of `ips`: mmdblookup's, checked equal to mmdb-lib's. */
async function readBoth(tree: Uint8Array, ips: string[]): Promise<Map<string, string[]>> {
  const db = openMmdb<FeedRecord>(tree);
  const file = await Deno.makeTempFile({ suffix: ".mmdb" });
  try {
    await Deno.writeFile(file, tree);
    const out = new Map<string, string[]>();
    for (const ip of ips) {
      const ours = describe(db.get(ip)?.matches);
      if (mmdblookupAvailable()) {
        const theirs = (await mmdblookup(file, ip)) as FeedRecord | null;
        assert.deepEqual(
          describe(theirs?.matches),
          ours,
          `mmdblookup and mmdb-lib differ at ${ip}`,
        );
      }
      out.set(ip, ours);
    }
    return out;
  } finally {
    await Deno.remove(file);
  }
}

function describe(matches: FeedRecord["matches"] | undefined): string[] {
  return (matches ?? []).map((m) => [m.source, m.network, m.city].filter(Boolean).join(" "));
}

Deno.test({
  name: ignoredName(
    "a geofeed's mapped prefix does not override a more specific IPv4 entry",
    missing,
  ),
  ignore: missing !== null,
  fn: async () => {
    const feed = parseFeed(
      "geofeed",
      "8.8.8.8/32,SE,,Stockholm,\n::ffff:808:800/120,NO,,Oslo-mapped,\n",
      "geo",
    );
    const { tree } = compileFeeds("location", [{ name: "geo", feed }]);
    const seen = await readBoth(tree!, ["8.8.8.8", "::ffff:8.8.8.8", "8.8.8.9", "8.8.9.0"]);
    const both = ["geo 8.8.8.8/32 Stockholm", "geo ::ffff:808:800/120 Oslo-mapped"];
    assert.deepEqual(seen.get("8.8.8.8"), both);
    assert.deepEqual(seen.get("::ffff:8.8.8.8"), both);
    assert.deepEqual(seen.get("8.8.8.9"), ["geo ::ffff:808:800/120 Oslo-mapped"]);
    assert.deepEqual(seen.get("8.8.9.0"), []);
  },
});

Deno.test({
  name: ignoredName(
    "::ffff:0:0/96 is the whole of IPv4: the outermost entry, under every IPv4 one",
    missing,
  ),
  ignore: missing !== null,
  fn: async () => {
    const feed = parseFeed(
      "geofeed",
      "::ffff:0:0/96,US,,Mapped,\n81.2.69.0/24,GB,,London,\n81.2.69.142,GB,,Holborn,\n",
      "geo",
    );
    const { tree } = compileFeeds("location", [{ name: "geo", feed }]);
    const seen = await readBoth(tree!, ["81.2.69.142", "81.2.69.1", "1.1.1.1", "::ffff:1.1.1.1"]);
    assert.deepEqual(seen.get("81.2.69.142"), [
      "geo 81.2.69.142 Holborn",
      "geo 81.2.69.0/24 London",
      "geo ::ffff:0:0/96 Mapped",
    ]);
    assert.deepEqual(seen.get("81.2.69.1"), [
      "geo 81.2.69.0/24 London",
      "geo ::ffff:0:0/96 Mapped",
    ]);
    assert.deepEqual(seen.get("1.1.1.1"), ["geo ::ffff:0:0/96 Mapped"]);
    assert.deepEqual(seen.get("::ffff:1.1.1.1"), ["geo ::ffff:0:0/96 Mapped"]);
  },
});

Deno.test({
  name: ignoredName("a threat list's mapped prefix does not hide another list's address", missing),
  ignore: missing !== null,
  fn: async () => {
    const { tree } = compileFeeds("threat", [
      { name: "a", feed: parseFeed("ip-list", "::ffff:81.2.69.0/120\n", "a") },
      { name: "b", feed: parseFeed("ip-list", "81.2.69.142\n", "b") },
    ]);
    const seen = await readBoth(tree!, ["81.2.69.142", "81.2.69.143"]);
    assert.deepEqual(seen.get("81.2.69.142"), ["b 81.2.69.142", "a ::ffff:81.2.69.0/120"]);
    assert.deepEqual(seen.get("81.2.69.143"), ["a ::ffff:81.2.69.0/120"]);
  },
});

/** A model entry: the block (first..last as numbers in IPv4 space, or bigint keys) and its text. */
interface ModelEntry {
  list: number;
  first: bigint;
  last: bigint;
  text: string;
}

Deno.test("random lists of IPv4, mapped, IPv6 networks and ranges: every covering entry, the smallest first", () => {
  const random = seededRandom(28);
  const int = (n: number) => Math.floor(random() * n);
  const v4 = (x: number) => `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
  const base = 0x0a000000; // 10.0.0.0, a /20 of it: dense overlaps
  const feeds: NamedFeed[] = [];
  const model: ModelEntry[] = [];
  const key4 = (x: number) => BigInt(x);
  const key6 = (text: string) => {
    const bytes = parseIp(text).bytes;
    return bytes.reduce((k, b) => (k << 8n) | BigInt(b), 0n);
  };
  for (let list = 0; list < 4; list++) {
    const lines: string[] = [];
    const ranges: string[] = [];
    for (let i = 0; i < 60; i++) {
      const len = 20 + int(13);
      const size = 2 ** (32 - len);
      const first = base + Math.floor(int(4096) / size) * size;
      const kind = int(10);
      if (kind < 5) lines.push(`${v4(first)}/${len}`);
      else if (kind < 7) lines.push(`::ffff:${v4(first)}/${len + 96}`);
      else if (kind < 9) {
        const lo = base + int(4096);
        ranges.push(`${v4(lo)},${v4(Math.min(base + 4095, lo + int(300)))}`);
      } else lines.push(`2400:cb00:${int(4).toString(16)}::/${48 + int(3)}`);
    }
    if (list === 1) lines.push("::/64"); // covers the IPv4 subtree (::/96) too
    const name = `l${list}`;
    const networks = parseFeed("ip-list", lines.join("\n"), name);
    const rangeFeed = parseFeed("csv-ranges", ranges.join("\n"), name);
    const feed = { ...networks, ranges: rangeFeed.ranges };
    feeds.push({ name, feed });
    // The model: IPv4 and mapped blocks as IPv4 keys (::a.b.c.d), ranges cut into CIDRs.
    const seen = new Set<string>();
    const add = (first: bigint, last: bigint, text: string) => {
      if (seen.has(`${first}-${last}`)) return;
      seen.add(`${first}-${last}`);
      model.push({ list, first, last, text });
    };
    for (const text of feed.networks) {
      const [address, len] = text.split("/") as [string, string];
      const mapped = address.startsWith("::ffff:");
      if (!address.includes(":") || mapped) {
        const x = Number(key6(mapped ? address : `::ffff:${address}`) & 0xffffffffn);
        const bits = mapped ? Number(len) - 96 : Number(len);
        add(key4(x), key4(x + 2 ** (32 - bits) - 1), text);
      } else {
        const first = key6(address);
        add(first, first + (1n << BigInt(128 - Number(len))) - 1n, text);
      }
    }
    for (const [a, b] of feed.ranges) {
      let lo = Number(key6(`::ffff:${a}`) & 0xffffffffn);
      const hi = Number(key6(`::ffff:${b}`) & 0xffffffffn);
      while (lo <= hi) {
        let bits = 0;
        while (lo % 2 ** (bits + 1) === 0 && lo + 2 ** (bits + 1) - 1 <= hi) bits++;
        add(key4(lo), key4(lo + 2 ** bits - 1), `${a}-${b}`);
        lo += 2 ** bits;
      }
    }
  }
  const { tree } = compileFeeds("threat", feeds);
  const expected = (key: bigint) =>
    model
      .filter((e) => e.first <= key && key <= e.last)
      .sort((x, y) => Number(x.last - x.first - (y.last - y.first)) || y.list - x.list)
      .map((e) => `l${e.list} ${e.text}`);
  const ips: string[] = [];
  for (let i = 0; i < 4096; i += 1 + int(8)) ips.push(v4(base + i));
  for (let i = 0; i < 40; i++) ips.push(`2400:cb00:${int(4).toString(16)}:${int(3)}::${int(9)}`);
  ips.push("::1", "::ffff:10.0.1.2", "10.0.16.0");
  const db = openMmdb<FeedRecord>(tree!);
  for (const ip of ips) {
    const mapped = ip.startsWith("::ffff:") ? ip.slice(7) : null;
    const key = ip.includes(":") && !mapped
      ? key6(ip)
      : key4(Number(key6(`::ffff:${mapped ?? ip}`) & 0xffffffffn));
    assert.deepEqual(describe(db.get(ip)?.matches), expected(key), `at ${ip}`);
  }
});
