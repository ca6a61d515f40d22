/**
 * `crawler-json`, the crawler operators' range files: read from the shared
 * snapshots' prefixes in the publishers' shape, invisible characters dropped
 * (Bing's U+200B), the date kept, and every malformed entry, a prefix of the
 * wrong family, and a file that lists nothing refused with a message naming it.
 */

import assert from "node:assert/strict";
import { parseFeed } from "../../../src/data/update/feed_parse.ts";
import { publisherJson, snapshotPrefixes } from "./_crawler_feeds.ts";
import { feedSource, startFeedServer, update, writeBaseDataDir } from "./_feed_server.ts";

const parse = (text: string) => parseFeed("crawler-json", text, "bing-bingbot");

Deno.test("crawler-json reads every prefix of each snapshot, IPv4 and IPv6, and its creationTime", () => {
  for (
    const files of [
      ["googlebot-ipv4.txt", "googlebot-ipv6.txt"],
      ["bing-ipv4.txt"],
      [
        "openai-ipv4.txt",
      ],
      ["duckduckbot-ipv4.txt"],
      ["perplexity-ipv4.txt"],
    ]
  ) {
    const prefixes = files.flatMap(snapshotPrefixes);
    const feed = parse(publisherJson(prefixes));
    assert.deepEqual(feed.networks, prefixes, files.join());
    assert.equal(feed.count, prefixes.length);
    assert.equal(feed.dataDate?.toISOString(), "2026-08-22T10:00:00.000Z");
  }
});

Deno.test("crawler-json drops U+200B and the other invisible characters inside a prefix", () => {
  const prefixes = snapshotPrefixes("bing-ipv4.txt");
  const marked = publisherJson(prefixes, 1);
  assert.ok(marked.includes("\u200b"));
  assert.deepEqual(parse(marked).networks, prefixes);
  const text = JSON.stringify({
    prefixes: [
      { ipv4Prefix: "\ufeff157.55.39.0/24\u2060" },
      { ipv4Prefix: " 40.77.167.0/24\u200d " },
      { ipv6Prefix: "2001:4860:4801:1a::/64\u200c" },
    ],
  });
  assert.deepEqual(parse(text).networks, [
    "157.55.39.0/24",
    "40.77.167.0/24",
    "2001:4860:4801:1a::/64",
  ]);
});

Deno.test("crawler-json refuses malformed files, naming the entry", () => {
  const bad: [string, unknown, RegExp][] = [
    ["not JSON", "{", /bing-bingbot: invalid JSON/],
    ["no prefixes", { creationTime: "x" }, /prefixes is not an array/],
    [
      "an entry that is not an object",
      { prefixes: ["1.2.3.0/24"] },
      /prefixes\[0\] is not an object/,
    ],
    [
      "an entry without a prefix",
      { prefixes: [{ ipv4: "1.2.3.0/24" }] },
      /prefixes\[0\]: expected one of/,
    ],
    [
      "two prefixes in one entry",
      { prefixes: [{ ipv4Prefix: "1.2.3.0/24", ipv6Prefix: "2001:db8::/32" }] },
      /prefixes\[0\]: expected one of/,
    ],
    [
      "an IPv6 prefix under ipv4Prefix",
      { prefixes: [{ ipv4Prefix: "2001:db8::/32" }] },
      /prefixes\[0\]\.ipv4Prefix: "2001:db8::\/32" is not an IPv4 prefix/,
    ],
    [
      "host bits",
      { prefixes: [{ ipv4Prefix: "1.2.3.4/24" }] },
      /prefixes\[0\]\.ipv4Prefix: invalid/,
    ],
    ["a number", { prefixes: [{ ipv4Prefix: 7 }] }, /prefixes\[0\]\.ipv4Prefix: not a string/],
    ["junk", { prefixes: [{ ok: 1 }, { ipv4Prefix: "nope" }] }, /prefixes\[0\]/],
  ];
  for (const [what, json, message] of bad) {
    const text = typeof json === "string" ? json : JSON.stringify(json);
    assert.throws(() => parse(text), message, what);
  }
  // A file that lists nothing parses to nothing: the update refuses it (below).
  assert.equal(parse(JSON.stringify({ prefixes: [] })).count, 0);
});

Deno.test("an empty crawler file fails its update like any empty list; the installed list stays", async () => {
  const server = startFeedServer();
  const dir = await writeBaseDataDir();
  try {
    const spec = feedSource(server, "bing-bingbot", "crawler", "/bingbot.json", {
      format: "crawler-json",
      operator: "Microsoft",
      crawler: "bingbot",
      userAgents: ["bingbot"],
    });
    server.routes.set("/bingbot.json", { body: publisherJson(snapshotPrefixes("bing-ipv4.txt")) });
    assert.equal((await update(dir, [spec])).outcomes[0]!.status, "updated");
    server.routes.set("/bingbot.json", {
      body: JSON.stringify({ creationTime: "2026-08-23T10:00:00", prefixes: [] }),
    });
    const { outcomes } = await update(dir, [spec]);
    assert.equal(outcomes[0]!.status, "failed");
    assert.match(outcomes[0]!.detail ?? "", /Refused: the list is empty/);
    const manifest = JSON.parse(await Deno.readTextFile(`${dir}/manifest.json`));
    const entry = manifest.sources.find((e: { name: string }) => e.name === "bing-bingbot");
    assert.equal(entry.count, snapshotPrefixes("bing-ipv4.txt").length);
    assert.deepEqual([entry.operator, entry.crawler, entry.userAgents], [
      "Microsoft",
      "bingbot",
      ["bingbot"],
    ]);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
