/**
 * The publishers' own formats added for issue 20 (Spamhaus DROP JSON and text,
 * Oracle, Azure, Cloudflare, Apple's geofeed, IPsum): read from small copies of
 * the real files, each list's date kept, and every malformed line refused
 * with a message naming the line. Membership is checked against SAMPLES-2.tsv,
 * whose rows were computed with Python's `ipaddress` (an independent parser).
 */

import assert from "node:assert/strict";
import type { SourceFormat } from "../../../src/data/sources/manifest.ts";
import { openMmdb } from "../../../src/data/mmdb/reader.ts";
import type { FeedRecord } from "../../../src/data/mmdb/records.ts";
import { compileFeeds } from "../../../src/data/update/feed_compile.ts";
import { parseFeed } from "../../../src/data/update/feed_parse.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
// The DROP fixture is JSON lines: named .jsonl so that `deno fmt` leaves it as published.
const read = (file: string) =>
  Deno.readTextFileSync(`${FIXTURES}${file.replace(/^spamhaus_drop_v4\.json$/, "$&l")}`);

const FORMATS: Record<string, SourceFormat> = {
  "spamhaus_drop_v4.json": "drop-json",
  "spamhaus_dropv6.txt": "ip-list",
  "oracle_public_ip_ranges.json": "oracle-json",
  "cloudflare_ips-v4.txt": "ip-list",
  "cloudflare_ips-v6.txt": "ip-list",
  "azure_servicetags_public.json": "azure-json",
  "icloud_private_relay_egress-ip-ranges.csv": "geofeed",
  "stamparm_ipsum.txt": "ipsum",
};

/** SAMPLES-2.tsv rows: file, address, expected membership. */
const SAMPLES = read("SAMPLES-2.tsv").split("\n").slice(1).filter((l) => l.trim() !== "")
  .map((line) => {
    const [file, ip, member] = line.split("\t");
    return { file: file!, ip: ip!, member: member === "yes" };
  });

Deno.test("each new format, compiled, answers every SAMPLES-2.tsv row as listed", () => {
  assert.equal(SAMPLES.length, 120);
  for (const [file, format] of Object.entries(FORMATS)) {
    const feed = parseFeed(format, read(file), file, { minCount: 1 });
    const { tree } = compileFeeds("threat", [{ name: file, feed }]);
    const db = openMmdb<FeedRecord>(tree!);
    const rows = SAMPLES.filter((r) => r.file === file);
    assert.ok(rows.length >= 5, file);
    for (const row of rows) {
      const record = db.get(row.ip);
      assert.equal(record !== null, row.member, `${file} ${row.ip}`);
      if (record) assert.equal(record.matches?.[0]?.source, file);
    }
  }
});

Deno.test("drop-json: the records, the metadata line's timestamp as the date, its count checked", () => {
  const text = read("spamhaus_drop_v4.json");
  const lines = text.trim().split("\n");
  const feed = parseFeed("drop-json", text, "drop");
  assert.deepEqual(feed.networks, lines.slice(0, -1).map((l) => JSON.parse(l).cidr));
  assert.equal(feed.dataDate?.toISOString(), "2026-07-23T09:14:02.000Z");
  // Cut short: the metadata line is missing, or counts more records than there are.
  assert.throws(
    () => parseFeed("drop-json", lines.slice(0, -1).join("\n"), "drop"),
    /drop: no metadata line/,
  );
  assert.throws(
    () => parseFeed("drop-json", [...lines.slice(1)].join("\n"), "drop"),
    /the metadata line counts 21 records, the file has 20/,
  );
});

Deno.test("the older Spamhaus text form: '; SBL' comments, dated by its Last-Modified line", () => {
  const feed = parseFeed("ip-list", read("spamhaus_dropv6.txt"), "dropv6");
  assert.equal(feed.count, 78);
  assert.equal(feed.networks[0], "2001:678:6c4::/48");
  assert.equal(feed.dataDate?.toISOString(), "2025-01-08T22:38:36.000Z");
});

Deno.test("oracle-json, azure-json and Cloudflare's lists: every prefix, the stated dates", () => {
  const oracle = JSON.parse(read("oracle_public_ip_ranges.json"));
  const o = parseFeed("oracle-json", read("oracle_public_ip_ranges.json"), "oracle");
  assert.deepEqual(
    o.networks,
    oracle.regions.flatMap((r: { cidrs: { cidr: string }[] }) => r.cidrs.map((c) => c.cidr)),
  );
  assert.equal(o.dataDate?.toISOString(), "2025-07-21T07:13:25.457Z");

  const azure = JSON.parse(read("azure_servicetags_public.json"));
  const a = parseFeed("azure-json", read("azure_servicetags_public.json"), "azure");
  assert.deepEqual(
    a.networks,
    azure.values.flatMap((v: { properties: { addressPrefixes: string[] } }) =>
      v.properties.addressPrefixes
    ),
  );
  assert.equal(a.dataDate, null, "Azure states no date: the download's stands");

  const cf = parseFeed("ip-list", read("cloudflare_ips-v4.txt"), "cf");
  assert.equal(cf.count, 15);
  assert.equal(cf.networks.at(-1), "131.0.72.0/22", "no final newline: the last line still counts");
});

Deno.test("geofeed: prefix, country, region, city, postal of every line (Apple's egress ranges)", () => {
  const text = read("icloud_private_relay_egress-ip-ranges.csv");
  const feed = parseFeed("geofeed", text, "relay");
  const lines = text.trim().split("\n");
  assert.equal(feed.count, lines.length);
  assert.deepEqual(feed.places![0], {
    country: "GB",
    region: "GB-EN",
    city: "London",
    postal: null,
  });
  const dublin = parseFeed("geofeed", "172.224.226.96/28,IE,,Dublin,\n", "g");
  assert.deepEqual(dublin.places![0], {
    country: "IE",
    region: null,
    city: "Dublin",
    postal: null,
  });
  // RFC 8805 rows may stop after any field; a comment line is skipped.
  const short = parseFeed("geofeed", "# ours\n10.1.0.0/16,de,DE-BE\n10.2.0.0/16\n", "g");
  assert.deepEqual(short.places, [
    { country: "DE", region: "DE-BE", city: null, postal: null },
    { country: null, region: null, city: null, postal: null },
  ]);
});

Deno.test("ipsum: address TAB count, only addresses on at least minCount lists, dated by its header", () => {
  const text = read("stamparm_ipsum.txt");
  const rows = text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => l.split("\t"));
  for (const minCount of [1, 5, 8, 10]) {
    const feed = parseFeed("ipsum", text, "ipsum", { minCount });
    assert.deepEqual(
      feed.networks,
      rows.filter(([, n]) => Number(n) >= minCount).map(([ip]) => ip),
      `minCount ${minCount}`,
    );
  }
  const feed = parseFeed("ipsum", text, "ipsum");
  assert.equal(feed.dataDate?.toISOString(), "2026-08-22T01:00:29.000Z");
});

Deno.test("every new parser refuses a malformed line or value, naming the source and the line", () => {
  const cases: [SourceFormat, string, RegExp][] = [
    [
      "drop-json",
      '{"cidr":"1.10.16.0/20","sblid":"SBL1","rir":"apnic"}\nnot json\n',
      /d line 2: invalid JSON/,
    ],
    [
      "drop-json",
      '{"cidr":"1.10.16.1/20","sblid":"SBL1","rir":"apnic"}\n',
      /d line 1: .*host bits/,
    ],
    ["drop-json", '{"cidr":"1.10.16.0/20","sblid":"x","rir":"apnic"}\n', /d line 1: "sblid" "x"/],
    ["drop-json", '{"sblid":"SBL1"}\n', /d line 1: no "cidr"/],
    [
      "drop-json",
      '{"type":"metadata","timestamp":1,"records":0}\n{"cidr":"1.0.0.0/8","sblid":"SBL1"}\n',
      /d line 2: a line after the metadata line/,
    ],
    ["ip-list", "2001:678:6c4::/48 ; SBL626637\n2001:678:6c4::/300 ; SBL1\n", /d line 2: .*prefix/],
    ["ipsum", "# IPsum\n1.2.3.4\t5\n1.2.3.4 5\n", /d line 3: expected "address<TAB>count"/],
    ["ipsum", "1.2.3.0/24\t5\n", /d line 1: expected an address/],
    ["ipsum", "1.2.3.4\t0\n", /d line 1: count 0/],
    ["ipsum", "1.2.3.999\t3\n", /d line 1: invalid address/],
    ["geofeed", "10.0.0.0/8,US,US-CA,Here,,extra\n", /d line 1: 6 fields, at most 5/],
    ["geofeed", "10.0.0.1/8,US,,,\n", /d line 1: .*host bits/],
    ["geofeed", "10.0.0.0/8,USA,,,\n", /d line 1: country "USA"/],
    [
      "geofeed",
      "10.0.0.0/8,US,DE-BE,,\n",
      /d line 1: region "DE-BE" is not an ISO 3166-2 code of "US"/,
    ],
    ["geofeed", '10.0.0.0/8,US,,"Here, there",\n', /d line 1: quoted fields/],
    [
      "oracle-json",
      '{"regions":[{"region":"x","cidrs":[{"cidr":"1.2.3.4/8"}]}]}',
      /d: regions\[0\].cidrs\[0\]: .*host bits/,
    ],
    ["oracle-json", '{"last_updated_timestamp":"2025-01-01"}', /d: regions is not an array/],
    ["oracle-json", "[1,2", /d: invalid JSON/],
    ["azure-json", '{"values":[]}', /d: no changeNumber/],
    [
      "azure-json",
      '{"changeNumber":1,"values":[{"name":"x","properties":{"addressPrefixes":["1.2.3.0/24","nope"]}}]}',
      /d: values\[0\].properties.addressPrefixes\[1\]: invalid address/,
    ],
  ];
  for (const [format, text, expected] of cases) {
    assert.throws(() => parseFeed(format, text, "d"), expected, `${format}: ${text}`);
  }
});
