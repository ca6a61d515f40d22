import assert from "node:assert/strict";
import { parseFeed } from "../../../src/data/update/feed_parse.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
const read = (file: string) => Deno.readTextFileSync(`${FIXTURES}${file}`);
/** Non-comment, non-blank lines: what each list holds, counted independently of the parser. */
const entries = (text: string) =>
  text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));

Deno.test("parseFeed() reads every native ip-list shape: Tor, FireHOL ipset and netset, X4BNet", () => {
  for (
    const file of [
      "tor_bulk_exit_list.txt",
      "firehol_tor_exits.ipset",
      "firehol_level1.netset",
      "x4bnet_vpn_ipv4.txt",
      "x4bnet_vpn_ipv6.txt",
      "x4bnet_datacenter_ipv4.txt",
      "x4bnet_datacenter_ipv6.txt",
    ]
  ) {
    const text = read(file);
    const feed = parseFeed("ip-list", text, file);
    assert.deepEqual(feed.networks, entries(text), file);
    assert.equal(feed.count, entries(text).length, file);
  }
});

Deno.test("parseFeed() takes FireHOL's 'This File Date' as the list's date", () => {
  const feed = parseFeed("ip-list", read("firehol_level1.netset"), "level1");
  assert.equal(feed.dataDate?.toISOString(), "2015-11-13T17:18:59.000Z");
  const tor = parseFeed("ip-list", read("firehol_tor_exits.ipset"), "tor");
  assert.equal(tor.dataDate?.toISOString(), "2021-09-30T13:12:02.000Z");
  assert.equal(parseFeed("ip-list", read("tor_bulk_exit_list.txt"), "t").dataDate, null);
});

Deno.test("parseFeed() reads AWS and Google range files with their dates", () => {
  const awsJson = JSON.parse(read("aws_ip-ranges.json"));
  const aws = parseFeed("aws-json", read("aws_ip-ranges.json"), "aws");
  assert.deepEqual(aws.networks, [
    ...awsJson.prefixes.map((p: { ip_prefix: string }) => p.ip_prefix),
    ...awsJson.ipv6_prefixes.map((p: { ipv6_prefix: string }) => p.ipv6_prefix),
  ]);
  assert.equal(aws.dataDate?.toISOString(), "2021-08-17T11:31:16.000Z");
  const google = parseFeed("google-json", read("google_cloud.json"), "google");
  assert.equal(google.count, JSON.parse(read("google_cloud.json")).prefixes.length);
  assert.ok(google.networks.some((n) => n.includes(":")));
  assert.equal(google.dataDate?.toISOString(), "2024-04-25T07:05:03.689Z");
});

Deno.test("parseFeed() accepts ; and # comments, CRLF, blank lines and comments after entries", () => {
  const feed = parseFeed(
    "ip-list",
    "; Spamhaus DROP style\r\n# header\r\n\r\n1.10.16.0/20 ; SBL256894\r\n  2001:db8::/32  \r\n5.6.7.8 # one host\n",
    "x",
  );
  assert.deepEqual(feed.networks, ["1.10.16.0/20", "2001:db8::/32", "5.6.7.8"]);
});

Deno.test("parseFeed() reads asn-list and csv-ranges", () => {
  const asns = parseFeed("asn-list", "# hosting\nAS13335\n16509\nas15169 ; Google\n", "asns");
  assert.deepEqual(asns.asns, [13335, 16509, 15169]);
  const ranges = parseFeed("csv-ranges", "# first,last\n1.2.3.4,1.2.3.200,extra\n::1,::5\n", "r");
  assert.deepEqual(ranges.ranges, [["1.2.3.4", "1.2.3.200"], ["::1", "::5"]]);
  assert.equal(ranges.count, 2);
});

Deno.test("parseFeed() refuses a malformed line, naming the source and the line", () => {
  const cases: { format: "ip-list" | "asn-list" | "csv-ranges"; text: string; error: RegExp }[] = [
    {
      format: "ip-list",
      text: "# c\n1.2.3.4\n1.2.3.0/33\n",
      error: /^Error: feed-x line 3: .*"1\.2\.3\.0\/33"/,
    },
    { format: "ip-list", text: "1.2.3.4\n1.2.3.5/24\n", error: /line 2: .*host bits/ },
    { format: "ip-list", text: "<html><body>Moved</body></html>\n", error: /line 1: .*"<html>/ },
    { format: "ip-list", text: "01.2.3.4\n", error: /line 1: .*leading zero/ },
    { format: "ip-list", text: "1.2.3.4 extra\n", error: /line 1: / },
    { format: "asn-list", text: "AS1\nASX\n", error: /line 2: invalid AS number "ASX"/ },
    { format: "asn-list", text: "99999999999\n", error: /line 1: invalid AS number/ },
    { format: "csv-ranges", text: "1.2.3.9,1.2.3.1\n", error: /line 1: .*ends before it starts/ },
    { format: "csv-ranges", text: "1.2.3.9,::1\n", error: /line 1: .*mixes IPv4 and IPv6/ },
    { format: "csv-ranges", text: "start,end\n", error: /line 1: invalid range/ },
  ];
  for (const { format, text, error } of cases) {
    assert.throws(() => parseFeed(format, text, "feed-x"), error, `${format}: ${text}`);
  }
  assert.throws(() => parseFeed("aws-json", "{", "aws"), /^Error: aws: invalid JSON/);
  assert.throws(
    () => parseFeed("aws-json", '{"prefixes":[{"ip_prefix":"1.2.3.4/8"}]}', "aws"),
    /aws: prefixes\[0\]: .*host bits/,
  );
});
