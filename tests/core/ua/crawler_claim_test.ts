/**
 * A user agent's claim to be a crawler: its products matched whole against the
 * default sources file's tokens (a product name, case-insensitively), never a
 * substring, a version or a URL's path.
 */

import assert from "node:assert/strict";
import { claimKey, createClaimReader } from "../../../src/core/ua/crawler_claim.ts";
import { defaultCrawlerSources } from "../../data/update/_crawler_feeds.ts";
import { CHROME } from "../../_helpers.ts";

const read = createClaimReader(
  defaultCrawlerSources().map((s) => ({
    crawler: s.crawler!,
    operator: s.operator!,
    userAgents: s.userAgents!,
  })),
);

const CASES: [string, string | null][] = [
  ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"],
  [
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/127.0.6533.119 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Googlebot",
  ],
  ["Googlebot-Image/1.0", "Googlebot"],
  ["Mozilla/5.0 (compatible; Google-InspectionTool/1.0;)", "Googlebot"],
  ["Mozilla/5.0 (compatible; GoogleOther)", "Googlebot"],
  ["AdsBot-Google (+http://www.google.com/adsbot.html)", "Google special-case crawler"],
  [
    "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)",
    "Google user-triggered fetcher",
  ],
  [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
    "bingbot",
  ],
  [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)",
    "GPTBot",
  ],
  [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
    "OAI-SearchBot",
  ],
  [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
    "ChatGPT-User",
  ],
  [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
    "Applebot",
  ],
  ["DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot"],
  ["DuckDuckBot-Https/1.1; (+https://duckduckgo.com/duckduckbot)", "DuckDuckBot"],
  [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
    "PerplexityBot",
  ],
  [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)",
    "Perplexity-User",
  ],
  ["googlebot", "Googlebot"], // product names are compared case-insensitively
  // Not claims: a longer product, a substring, a version, a URL's path, a browser.
  ["NotGooglebot/1.0", null],
  ["Googlebotty/2.1", null],
  ["Mozilla/5.0 (compatible; MyGooglebot-Image/1.0)", null],
  ["curl/8.5.0 http://example.com/Googlebot", null],
  ["SomeBot/Googlebot", null],
  ["Mozilla/5.0 (compatible; Google-Extended)", null],
  [CHROME, null],
  ["", null],
];

Deno.test("a user agent claims the crawler one of its products names, matched whole", () => {
  for (const [ua, crawler] of CASES) {
    assert.equal(read(ua)?.crawler ?? null, crawler, ua);
  }
  assert.equal(read(null), null);
  assert.equal(read(undefined), null);
});

Deno.test("the claim names the operator; its key is the operator and crawler, or empty", () => {
  const claim = read("Mozilla/5.0 (compatible; bingbot/2.0)");
  assert.deepEqual(claim, { crawler: "bingbot", operator: "Microsoft" });
  assert.equal(claimKey(claim), "Microsoft\tbingbot");
  assert.equal(claimKey(read(CHROME)), "");
  // Repeats (the one-entry memo) and alternation give each its own claim.
  for (let i = 0; i < 4; i++) {
    assert.equal(
      read(i % 2 ? CHROME : "Googlebot/2.1")?.crawler ?? null,
      i % 2 ? null : "Googlebot",
    );
  }
});

Deno.test("a claim past the scanned length or in a hostile string is read without regular expressions", () => {
  const padding = "x".repeat(10_000);
  assert.equal(read(`${padding} Googlebot/2.1`), null); // past CLAIM_SCAN_LIMIT
  assert.equal(read(`Googlebot/2.1 ${padding}`)?.crawler, "Googlebot");
  assert.equal(read("(((((;;;;;////   ")?.crawler ?? null, null);
  // The first claim wins.
  assert.equal(read("bingbot/2.0 Googlebot/2.1")?.crawler, "bingbot");
  // No known crawlers: no claims.
  assert.equal(createClaimReader([])("Googlebot/2.1"), null);
});
