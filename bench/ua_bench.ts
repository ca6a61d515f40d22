/**
 * User-agent parsing cost, including hostile input the tests no longer time:
 * a 100 KB string is read as its first 500 characters (UA_MAX_LENGTH), so it
 * costs about as much as a normal user agent.
 *
 * Run: `deno bench --allow-read bench/ua_bench.ts`.
 *
 * @module
 */

import { createUserAgentParser } from "../src/core/ua/parse.ts";

const CHROME =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 ";
const HOSTILE = ["Android ", "; ", "(a", "Build/", "mobile ", "x"].map((p) =>
  CHROME + p.repeat(Math.ceil(100_000 / p.length))
);
const noCache = createUserAgentParser({ cacheSize: 0 });
const cached = createUserAgentParser();

Deno.bench({
  name: "a browser user agent, uncached",
  group: "ua",
  baseline: true,
  fn: () => void noCache(CHROME),
});

Deno.bench({
  name: "a browser user agent, cached",
  group: "ua",
  fn: () => void cached(CHROME),
});

Deno.bench({
  name: "six hostile 100 KB user agents, uncached (per string: divide by 6)",
  group: "hostile",
  fn() {
    for (const ua of HOSTILE) noCache(ua);
  },
});

Deno.bench({
  name: "a string of 100,000 '(' , uncached",
  group: "hostile",
  fn: () => void noCache("(".repeat(100_000)),
});
