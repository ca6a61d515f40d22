import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { parseSourcesFile, SourcesFileError } from "../../../src/data/sources/sources_file.ts";
import { ConfigError } from "../../../src/base/config.ts";
import { runCli } from "../../_cli.ts";

const parse = (source: Record<string, unknown>) =>
  parseSourcesFile({ sources: [{ url: "https://example.com/x", ...source }] }, "s.json")
    .sources[0]!;

Deno.test("sources file: licence and attribution are optional and shown as not stated", () => {
  const spec = parse({ name: "office", kind: "allow", format: "ip-list" });
  assert.equal(spec.license, "not stated");
  assert.equal(spec.attribution, "not stated");
  assert.equal(
    parse({ name: "o", kind: "allow", format: "ip-list", license: "MIT" }).license,
    "MIT",
  );
});

Deno.test("sources file: provider, minCount and the location kind are checked", () => {
  const ok = parse({ name: "i", kind: "threat", format: "ipsum", minCount: 4 });
  assert.equal(ok.minCount, 4);
  assert.equal(
    parse({ name: "r", kind: "relay", format: "geofeed", provider: "Apple" }).provider,
    "Apple",
  );
  const refused: [Record<string, unknown>, RegExp][] = [
    [
      { name: "t", kind: "tor", format: "ip-list", provider: "X" },
      /\(t\) provider: only hosting and relay/,
    ],
    [
      { name: "a", kind: "threat", format: "ip-list", minCount: 3 },
      /\(a\) minCount: only the "ipsum"/,
    ],
    [
      { name: "b", kind: "threat", format: "ipsum", minCount: 0 },
      /\(b\) minCount 0: expected a whole number/,
    ],
    [
      { name: "l", kind: "location", format: "ip-list" },
      /\(l\) format "ip-list" cannot give a location list: use geofeed/,
    ],
    [
      { name: "d", kind: "threat", format: "drop-jsonl" },
      /\(d\) format "drop-jsonl": expected one of/,
    ],
    [
      { name: "e", kind: "relay", format: "geofeed", license: "" },
      /\(e\) license "": expected a non-empty string/,
    ],
  ];
  for (const [source, expected] of refused) {
    assert.throws(() => parse(source), expected, JSON.stringify(source));
  }
});

Deno.test("sources file: file:// URLs and paths (relative to the file) name local sources", () => {
  const at = (url: string, label = "/etc/ipintel/sources.json") =>
    parseSourcesFile(
      { sources: [{ name: "t", kind: "tor", format: "ip-list", url }] },
      label,
    ).sources[0]!.url;
  assert.equal(at("file:///srv/feeds/tor.txt"), "file:///srv/feeds/tor.txt");
  assert.equal(at("file://localhost/srv/feeds/tor.txt"), "file:///srv/feeds/tor.txt");
  assert.equal(at("feeds/tor.txt"), "file:///etc/ipintel/feeds/tor.txt");
  assert.equal(at("../feeds/tor list.txt"), "file:///etc/feeds/tor%20list.txt");
  assert.equal(at("/srv/tor.txt"), "file:///srv/tor.txt");
  assert.equal(at("tor.txt", "relative.json"), pathToFileURL(`${Deno.cwd()}/tor.txt`).href);
  assert.equal(at("https://example.com/tor"), "https://example.com/tor");
  for (const url of ["ftp://example.com/tor", "file://otherhost/tor.txt", "data:,1.2.3.4"]) {
    assert.throws(
      () => at(url),
      /url ".*": expected an http\(s\) URL, a file:\/\/ URL or a path/,
      url,
    );
  }
  assert.throws(() => at("ftp://x/y"), SourcesFileError);
  assert.throws(() => at("ftp://x/y"), ConfigError, "a configuration error: exit status 2");
});

Deno.test("data update with an invalid sources file exits 2, naming the file and the entry", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-sources-" });
  try {
    await Deno.writeTextFile(
      `${dir}/sources.json`,
      JSON.stringify({
        sources: [{ name: "t", kind: "tor", format: "ip-list", url: "gopher://x/tor" }],
      }),
    );
    const { code, stderr } = await runCli(
      ["data", "update", "--data-dir", dir, "--sources", `${dir}/sources.json`],
      {},
    );
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      new RegExp(`Invalid sources file ${dir}/sources.json: sources\\[0\\] \\(t\\) url`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sources file: an unknown field is named with the nearest known one, a missing one as missing", () => {
  const refused: [unknown, RegExp][] = [
    [
      { sources: [{ name: "t", kind: "tor", formt: "ip-list", url: "https://x/t" }] },
      /: sources\[0\] \(t\) unknown field "formt" \(did you mean "format"\?\); expected name, kind, format, url/,
    ],
    [
      { sources: [{ name: "t", kind: "tor", url: "https://x/t" }] },
      /: sources\[0\] \(t\) format is missing: expected one of npm, mmdb/,
    ],
    [
      { sources: [{ kind: "tor", format: "ip-list", url: "https://x/t" }] },
      /: sources\[0\] name is missing: expected a name of letters/,
    ],
    [
      { sources: [{ name: "t", kind: "tor", format: "ip-list" }] },
      /: sources\[0\] \(t\) url is missing: expected an http\(s\) URL/,
    ],
    [
      {
        sources: [{
          name: "t",
          kind: "tor",
          format: "ip-list",
          url: "https://x/t",
          licence: "MIT",
        }],
      },
      /\(t\) unknown field "licence" \(did you mean "license"\?\)/,
    ],
    [
      { sources: [{ name: "t", kind: "tor", format: "ip-list", url: "https://x/t", colour: 1 }] },
      /\(t\) unknown field "colour"; expected name/,
    ],
    [
      { sorces: [] },
      /: unknown field "sorces" \(did you mean "sources"\?\); expected registry, sources/,
    ],
    [
      { registry: "https://r" },
      /: sources is missing: expected a list of sources/,
    ],
  ];
  for (const [json, expected] of refused) {
    assert.throws(() => parseSourcesFile(json, "s.json"), expected, JSON.stringify(json));
    try {
      parseSourcesFile(json, "s.json");
    } catch (error) {
      const message = (error as Error).message;
      assert.ok(!message.includes("\n"), `one line: ${message}`);
      assert.ok(!/\bundefined\b/.test(message), `JavaScript's undefined shown: ${message}`);
    }
  }
});

Deno.test("serve with a bad sources file exits 2 before it listens, naming the file, the entry and the field", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-sources-serve-" });
  const valid = JSON.stringify(
    { sources: [{ name: "tor-exits", kind: "tor", format: "ip-list", url: "tor.txt" }] },
    null,
    2,
  );
  const files: [string, RegExp][] = [
    [
      valid.replace('"format"', '"formt"'),
      /sources\[0\] \(tor-exits\) unknown field "formt" \(did you mean "format"\?\)/,
    ],
    [valid.slice(0, valid.length / 2), /not valid JSON/],
  ];
  try {
    for (const [text, expected] of files) {
      await Deno.writeTextFile(`${dir}/sources.json`, text);
      const { code, stdout, stderr } = await runCli(
        ["serve", "--port", "0", "--workers", "1", "--update-interval", "off"],
        { IPINTEL_SOURCES: `${dir}/sources.json`, NO_COLOR: "1" },
        30_000,
      );
      assert.equal(code, 2, stderr);
      assert.equal(stdout, "");
      const lines = stderr.trim().split("\n");
      assert.equal(lines.length, 1, stderr);
      assert.match(
        lines[0]!,
        new RegExp(`^ipintel serve: Invalid sources file ${dir}/sources.json: `),
      );
      assert.match(lines[0]!, expected);
      assert.doesNotMatch(stderr, /listening/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sources file: a crawler list names its operator and crawler; its tokens are product tokens", () => {
  const ok = parse({
    name: "google-googlebot",
    kind: "crawler",
    format: "crawler-json",
    operator: "Google",
    crawler: "Googlebot",
    userAgents: ["Googlebot", "Googlebot-Image"],
  });
  assert.deepEqual([ok.operator, ok.crawler, ok.userAgents], [
    "Google",
    "Googlebot",
    ["Googlebot", "Googlebot-Image"],
  ]);
  // Tokens are optional (ranges only), and an operator's own list may be plain text.
  const plain = parse({
    name: "mine",
    kind: "crawler",
    format: "ip-list",
    operator: "Us",
    crawler: "Our monitor",
  });
  assert.equal(plain.userAgents, undefined);
  const crawler = {
    name: "c",
    kind: "crawler",
    format: "crawler-json",
    operator: "G",
    crawler: "B",
  };
  const refused: [Record<string, unknown>, RegExp][] = [
    [
      { ...crawler, operator: undefined },
      /\(c\) operator is missing: expected who runs the crawler/,
    ],
    [{ ...crawler, crawler: "" }, /\(c\) crawler "": expected the crawler's name/],
    [{ ...crawler, crawler: "Bingbot™" }, /\(c\) crawler "Bingbot™": expected printable ASCII/],
    [{ ...crawler, operator: "G\nX" }, /\(c\) operator "G\\nX": expected printable ASCII/],
    [
      { ...crawler, userAgents: "Googlebot" },
      /\(c\) userAgents "Googlebot": expected a list of user-agent product tokens/,
    ],
    [
      { ...crawler, userAgents: ["Google bot"] },
      /\(c\) userAgents \["Google bot"\]: expected a list/,
    ],
    [{ ...crawler, userAgents: ["Googlebot/2.1"] }, /\(c\) userAgents/],
    [
      { ...crawler, format: "aws-json" },
      /\(c\) format "aws-json" cannot give a crawler list: use crawler-json, ip-list, csv-ranges/,
    ],
    [
      { name: "h", kind: "hosting", format: "ip-list", operator: "G" },
      /\(h\) operator: only crawler lists name operator/,
    ],
    [
      { name: "h", kind: "hosting", format: "ip-list", userAgents: ["x"] },
      /\(h\) userAgents: only crawler lists/,
    ],
  ];
  for (const [source, message] of refused) {
    assert.throws(() => parse(source), (error: unknown) => {
      assert.ok(error instanceof SourcesFileError);
      assert.match((error as Error).message, message);
      return true;
    }, JSON.stringify(source));
  }
});

Deno.test("sources file: the default file's crawler entries each name an operator, a crawler and tokens", async () => {
  const path = new URL("../../../data/sources.json", import.meta.url).pathname;
  const json = JSON.parse(await Deno.readTextFile(path));
  const crawlers = parseSourcesFile(json, path).sources.filter((s) => s.kind === "crawler");
  assert.deepEqual(crawlers.map((s) => s.url), [
    "https://developers.google.com/search/apis/ipranges/googlebot.json",
    "https://developers.google.com/search/apis/ipranges/special-crawlers.json",
    "https://developers.google.com/search/apis/ipranges/user-triggered-fetchers.json",
    "https://www.bing.com/toolbox/bingbot.json",
    "https://openai.com/gptbot.json",
    "https://openai.com/searchbot.json",
    "https://openai.com/chatgpt-user.json",
    "https://search.developer.apple.com/applebot.json",
    "https://duckduckgo.com/duckduckbot.json",
    "https://www.perplexity.ai/perplexitybot.json",
    "https://www.perplexity.ai/perplexity-user.json",
  ]);
  for (const s of crawlers) {
    assert.equal(s.format, "crawler-json", s.name);
    assert.ok(s.operator && s.crawler && s.userAgents?.length, s.name);
    assert.match(s.license, /^Not stated/, s.name);
  }
  const tokens = Object.fromEntries(crawlers.map((s) => [s.crawler, s.userAgents]));
  assert.deepEqual(tokens.Googlebot, [
    "Googlebot",
    "Googlebot-Image",
    "Googlebot-News",
    "Googlebot-Video",
    "Storebot-Google",
    "Google-InspectionTool",
    "GoogleOther",
  ]);
  assert.deepEqual(tokens.bingbot, ["bingbot", "BingPreview"]);
  assert.deepEqual(
    [tokens.GPTBot, tokens["OAI-SearchBot"], tokens["ChatGPT-User"], tokens.Applebot],
    [["GPTBot"], ["OAI-SearchBot"], ["ChatGPT-User"], ["Applebot"]],
  );
  assert.deepEqual([tokens.PerplexityBot, tokens["Perplexity-User"]], [
    ["PerplexityBot"],
    ["Perplexity-User"],
  ]);
  assert.ok(tokens.DuckDuckBot?.includes("DuckDuckBot"));
});
