/**
 * The crawler verdict on the real snapshots (tests/fixtures/feeds/crawlers),
 * installed by `data update` from the publishers' JSON served on loopback
 * (Bing's with U+200B in its prefixes): every prefix's first and last address
 * is a verified crawler of its list, whatever the user agent says; the
 * addresses just outside are not (unless another published range holds them),
 * and claiming a crawler there is a fake. Also: the data-centre override, a
 * fake from AWS, IPv6, and the claims no installed list can judge.
 */

import assert from "node:assert/strict";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { startFeedServer } from "../../data/update/_feed_server.ts";
import {
  defaultCrawlerSources,
  publisherJson,
  SNAPSHOT_OF,
  snapshotPrefixes,
  writeCrawlerDataDir,
} from "../../data/update/_crawler_feeds.ts";
import { CHROME, FIXED_NOW } from "../../_helpers.ts";

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const RISK = { selection: { risk: true } };

/** A CIDR as its first and last address, as numbers (IPv6: 128 bits). */
function bounds(cidr: string): { v6: boolean; first: bigint; last: bigint } {
  const [address, length] = cidr.split("/");
  const v6 = address!.includes(":");
  const bits = v6 ? 128 : 32;
  let value = 0n;
  if (v6) {
    const [head, tail = ""] = address!.split("::");
    const part = (s: string) => s ? s.split(":") : [];
    const groups = [
      ...part(head!),
      ...Array(8 - part(head!).length - part(tail).length).fill("0"),
      ...part(tail),
    ];
    for (const g of groups) value = (value << 16n) | BigInt(parseInt(g, 16));
  } else {
    for (const octet of address!.split(".")) value = (value << 8n) | BigInt(Number(octet));
  }
  const host = BigInt(bits - Number(length ?? bits));
  return { v6, first: value, last: value | ((1n << host) - 1n) };
}

/** The address text of a number. */
function text(value: bigint, v6: boolean): string {
  if (!v6) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join(".");
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  return groups.join(":");
}

const server = startFeedServer();
const dir = await writeCrawlerDataDir(server);
const data = await openDataSet(dir);
const lookup = createLookup({
  data,
  now: () => FIXED_NOW,
  parseUserAgent: createUserAgentParser(),
});
await server.close();
await Deno.remove(dir, { recursive: true });

const CRAWLER_OF = new Map(defaultCrawlerSources().map((s) => [s.name, s.crawler!]));
/** Every served snapshot's ranges, with the crawler its list names. */
const RANGES = Object.entries(SNAPSHOT_OF).flatMap(([name, { files }]) =>
  files.flatMap(snapshotPrefixes).map((cidr) => ({
    cidr,
    crawler: CRAWLER_OF.get(name)!,
    ...bounds(cidr),
  }))
);
/** The crawlers whose published ranges hold an address. */
const holders = (value: bigint, v6: boolean) =>
  new Set(
    RANGES.filter((r) => r.v6 === v6 && r.first <= value && value <= r.last).map((r) => r.crawler),
  );

Deno.test("every snapshot prefix's first and last address is a verified crawler of its list, whatever the user agent", () => {
  assert.ok(RANGES.length > 1000);
  for (const range of RANGES) {
    for (const value of [range.first, range.last]) {
      const ip = text(value, range.v6);
      for (const userAgent of [null, CHROME, GOOGLEBOT]) {
        const { risk, security } = lookup.find(ip, { ...RISK, userAgent });
        assert.equal(risk!.crawler?.verified, true, `${range.cidr} ${ip} ${userAgent}`);
        assert.ok(holders(value, range.v6).has(risk!.crawler!.name), `${range.cidr} ${ip}`);
        assert.notEqual(security.isThreat, "medium", `${ip}: a verified crawler is not medium`);
        assert.notEqual(security.isThreat, "high", `${ip}`);
      }
    }
  }
});

Deno.test("the addresses just outside each prefix are no crawler, and claiming one there is a fake", () => {
  let checked = 0;
  for (const range of RANGES) {
    const max = range.v6 ? (1n << 128n) - 1n : (1n << 32n) - 1n;
    for (const value of [range.first - 1n, range.last + 1n]) {
      if (value < 0n || value > max || holders(value, range.v6).size > 0) continue;
      const ip = text(value, range.v6);
      assert.equal(lookup.find(ip, { ...RISK, userAgent: CHROME }).risk!.crawler, null, ip);
      const fake = lookup.find(ip, { ...RISK, userAgent: GOOGLEBOT });
      assert.deepEqual(fake.risk!.crawler, {
        name: "Googlebot",
        operator: "Google",
        verified: false,
      }, ip);
      assert.ok(["medium", "high"].includes(fake.security.isThreat!), ip);
      checked++;
    }
  }
  assert.ok(checked > 1000, `${checked} addresses outside`);
});

Deno.test("Googlebot in X4BNet's data-centre block is verified and low; the same claim from AWS or 8.8.8.8 is a fake", () => {
  const real = lookup.find("66.249.66.1", { ...RISK, userAgent: GOOGLEBOT });
  assert.deepEqual(real.risk!.crawler, { name: "Googlebot", operator: "Google", verified: true });
  assert.deepEqual(real.security, { isVpn: false, isTor: null, isThreat: "low" });
  assert.equal(real.risk!.anonymizer, null);
  assert.deepEqual(
    real.risk!.matches.map((m) => [m.source, m.kind, m.network]),
    [["x4bnet-datacenter-ipv4", "hosting", "66.249.64.0/19"], [
      "google-googlebot",
      "crawler",
      "66.249.66.0/27",
    ]],
  );
  assert.match(
    real.risk!.reason,
    /^low: Googlebot of Google \(google-googlebot\): a verified crawler/,
  );
  // The default answer (no `risk`) says the same.
  assert.equal(lookup.find("66.249.66.1", { userAgent: GOOGLEBOT }).security.isThreat, "low");

  for (const ip of ["3.5.140.1", "8.8.8.8"]) {
    const fake = lookup.find(ip, { ...RISK, userAgent: GOOGLEBOT });
    assert.deepEqual(
      fake.risk!.crawler,
      { name: "Googlebot", operator: "Google", verified: false },
      ip,
    );
    assert.equal(fake.security.isThreat, "medium", ip);
    assert.match(
      fake.risk!.reason,
      /^medium: the user agent claims Googlebot, but the address is outside every range Google publishes \(google-googlebot\): a fake crawler$/,
    );
    assert.equal(lookup.find(ip, { userAgent: GOOGLEBOT }).security.isThreat, "medium", ip);
  }
  const browser = lookup.find("3.5.140.1", { ...RISK, userAgent: CHROME });
  assert.equal(browser.risk!.crawler, null);
  assert.equal(browser.risk!.anonymizer, "hosting");
  assert.equal(browser.risk!.provider, "Amazon Web Services");
});

Deno.test("bingbot is verified through prefixes that carried U+200B; an IPv6 Googlebot address is verified", () => {
  // Served as Bing does: its block written "157.55.39.0\u200b/24\u200b".
  const served = publisherJson(
    snapshotPrefixes("bing-ipv4.txt"),
    SNAPSHOT_OF["bing-bingbot"]!.mark,
  );
  assert.ok(served.includes("157.55.39.0\u200b/24\u200b"));
  const bing = lookup.find("157.55.39.1", {
    ...RISK,
    userAgent: "Mozilla/5.0 (compatible; bingbot/2.0)",
  });
  assert.deepEqual(bing.risk!.crawler, { name: "bingbot", operator: "Microsoft", verified: true });
  // Every bing prefix (a third of them marked) installed as published, without the mark.
  const entries = bing.risk!.matches.filter((m) => m.kind === "crawler").map((m) => m.network);
  assert.deepEqual(entries, ["157.55.39.0/24"]);
  const v6 = lookup.find("2001:4860:4801:1a::1", { ...RISK, userAgent: GOOGLEBOT });
  assert.deepEqual(v6.risk!.crawler, { name: "Googlebot", operator: "Google", verified: true });
  assert.equal(v6.security.isThreat, "low");
});

Deno.test("a claim no installed list can judge is no crawler, and risk.reason says why", () => {
  // Apple's list is not served here: Applebot cannot be judged.
  const apple = lookup.find("3.5.140.1", { ...RISK, userAgent: "Applebot/0.1" });
  assert.equal(apple.risk!.crawler, null);
  assert.equal(apple.security.isThreat, "medium"); // AWS hosting, not a fake
  assert.match(
    apple.risk!.reason,
    /; the user agent claims Applebot \(Apple\), which cannot be judged: no crawler source of Apple is installed$/,
  );
  assert.equal(lookup.claimKey("Applebot/0.1"), "Apple\tApplebot");
  assert.equal(lookup.claimKey(CHROME), "");
});

Deno.test("an `at` answer judges no claim: the crawler lists keep no history", () => {
  const now = createLookup({
    data,
    now: () => new Date(),
    parseUserAgent: createUserAgentParser(),
  });
  const at = new Date(); // after the update that made the data (its history starts there)
  const past = now.find("3.5.140.1", { ...RISK, userAgent: GOOGLEBOT, at });
  assert.equal(past.risk!.crawler, null);
  assert.equal(past.risk!.asOf, at.toISOString());
  assert.doesNotMatch(past.risk!.reason, /Googlebot/);
});
