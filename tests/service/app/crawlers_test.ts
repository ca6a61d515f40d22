/**
 * Issue 48's acceptance through the app: the default sources file's crawler
 * entries re-pointed to a loopback server serving the shared snapshots in the
 * publishers' shape, beside X4BNet's data-centre list and AWS's ranges, all
 * installed by `data update`. Answers on /ip (header, `ua=`, the JSON body),
 * /bulk, in JSON, XML and CSV; the answer cache (20 alternating user agents on
 * one address, with and without the cache); /auth with the documented
 * crawler policy; /status listing the crawler sources; the OpenAPI schema.
 */

import assert from "node:assert/strict";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { AnswerCache } from "../../../src/service/app/answer_cache.ts";
import type { App } from "../../../src/service/app/app.ts";
import { PolicyGate } from "../../../src/service/policy/gate.ts";
import { startFeedServer } from "../../data/update/_feed_server.ts";
import {
  defaultCrawlerSources,
  snapshotPrefixes,
  writeCrawlerDataDir,
} from "../../data/update/_crawler_feeds.ts";
import { CHROME, FIXED_NOW, fixtureApp, peer } from "../../_helpers.ts";
import { CRAWLER_GATE_FEEDS, writeGateDataDir } from "../policy/_gate_data.ts";

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BINGBOT =
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36";
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

const server = startFeedServer();
const dir = await writeCrawlerDataDir(server);
const data = await openDataSet(dir, { configured: defaultCrawlerSources() });
await server.close();
await Deno.remove(dir, { recursive: true });

const policyDir = await Deno.makeTempDir({ prefix: "ipintel-crawlers-" });
await Deno.writeTextFile(
  `${policyDir}/policy.json`,
  JSON.stringify({
    default: "allow",
    rules: [
      { name: "real-crawlers", action: "allow", security: ["crawler"] },
      { name: "fake-crawlers", action: "deny", security: ["fake-crawler"] },
      { name: "no-hosting", action: "deny", security: ["hosting"] },
    ],
  }),
);
const gate = await PolicyGate.open(`${policyDir}/policy.json`, { report: () => {} });
gate.close();
await Deno.remove(policyDir, { recursive: true });

const parseUserAgent = createUserAgentParser();
const counts = { hits: 0, misses: 0 };
/** The app over the crawler data, with or without the answer cache. */
async function app(cached: boolean): Promise<App> {
  const lookup = createLookup({
    data,
    now: () => FIXED_NOW,
    parseUserAgent: createUserAgentParser(),
  });
  return await fixtureApp({
    slot: { current: { data, lookup } },
    config: { trustedProxies: ["127.0.0.1"] },
    policy: gate,
    ...(cached
      ? {
        answerCache: new AnswerCache({
          entries: 1000,
          sink: { hit: () => counts.hits++, miss: () => counts.misses++, bytes: () => {} },
        }),
      }
      : {}),
  });
}
const cachedApp = await app(true);
const plainApp = await app(false);

async function get(
  path: string,
  userAgent: string | null,
  into: App = cachedApp,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (userAgent !== null) headers.set("user-agent", userAgent);
  return await into.fetch(
    new Request(`http://localhost${path}`, { ...init, headers }),
    peer("127.0.0.1"),
  );
}
const json = async (path: string, userAgent: string | null, into?: App) =>
  (await (await get(path, userAgent, into)).json()).data;

Deno.test("the acceptance: a real Googlebot, fakes from AWS and 8.8.8.8, a browser, bingbot, IPv6", async () => {
  const real = await json("/ip/66.249.66.1?get=security,risk", GOOGLEBOT);
  assert.deepEqual(real.risk.crawler, { name: "Googlebot", operator: "Google", verified: true });
  assert.ok(!["medium", "high"].includes(real.security.isThreat), real.security.isThreat);
  for (const ip of ["3.5.140.1", "8.8.8.8"]) {
    const fake = await json(`/ip/${ip}?get=security,risk`, GOOGLEBOT);
    assert.deepEqual(fake.risk.crawler, { name: "Googlebot", operator: "Google", verified: false });
    assert.ok(["medium", "high"].includes(fake.security.isThreat), ip);
    assert.match(fake.risk.reason, /a fake crawler/);
  }
  assert.equal((await json("/ip/3.5.140.1?get=crawler", CHROME)).crawler, null);
  assert.deepEqual((await json("/ip/157.55.39.1?get=crawler", BINGBOT)).crawler, {
    name: "bingbot",
    operator: "Microsoft",
    verified: true,
  });
  assert.deepEqual((await json("/ip/2001:4860:4801:1a::1?get=crawler", null)).crawler, {
    name: "Googlebot",
    operator: "Google",
    verified: true,
  });
});

Deno.test("the user agent judged is the request's: the header, ua=, the JSON body; bulk's applies to each item", async () => {
  const ua = await json(`/ip/3.5.140.1?get=crawler&ua=${encodeURIComponent(GOOGLEBOT)}`, CHROME);
  assert.equal(ua.crawler?.verified, false);
  const body = await (await get("/ip/3.5.140.1?get=crawler", CHROME, cachedApp, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ userAgent: GOOGLEBOT }),
  })).json();
  assert.equal(body.data.crawler?.verified, false);
  const bulk = await json(
    "/bulk/3.5.140.1,66.249.66.1,81.2.69.142?get=crawler,isThreat",
    GOOGLEBOT,
  );
  assert.deepEqual(bulk.responseArray.map((i: { crawler: unknown }) => i.crawler), [
    { name: "Googlebot", operator: "Google", verified: false },
    { name: "Googlebot", operator: "Google", verified: true },
    { name: "Googlebot", operator: "Google", verified: false },
  ]);
  assert.deepEqual(bulk.responseArray.map((i: { isThreat: unknown }) => i.isThreat), [
    "medium",
    "low",
    "medium",
  ]);
});

Deno.test("XML and CSV carry risk.crawler: an element, and three columns empty when null", async () => {
  const xml = await (await get("/ip/3.5.140.1?get=crawler&format=xml", GOOGLEBOT)).text();
  assert.match(
    xml,
    /<crawler><name>Googlebot<\/name><operator>Google<\/operator><verified>false<\/verified><\/crawler>/,
  );
  const none = await (await get("/ip/3.5.140.1?get=crawler&format=xml", CHROME)).text();
  assert.match(none, /<crawler\/>/);
  const csv = await (await get("/ip/66.249.66.1?get=risk.crawler,isThreat&format=csv", GOOGLEBOT))
    .text();
  assert.equal(
    csv,
    "ip,isThreat,risk.crawler.name,risk.crawler.operator,risk.crawler.verified\r\n" +
      "66.249.66.1,low,Googlebot,Google,true\r\n",
  );
  const empty = await (await get("/ip/3.5.140.1?get=crawler&format=csv", CHROME)).text();
  assert.equal(empty, "ip,crawler.name,crawler.operator,crawler.verified\r\n3.5.140.1,,,\r\n");
  const bulk = await (await get("/bulk/3.5.140.1,66.249.66.1?get=crawler&format=csv", CHROME))
    .text();
  assert.equal(
    bulk,
    "ip,crawler.name,crawler.operator,crawler.verified\r\n" +
      "3.5.140.1,,,\r\n66.249.66.1,Googlebot,Google,true\r\n",
  );
});

Deno.test("a streamed bulk CSV naming risk has the crawler's columns and values", async () => {
  const response = await get("/bulk?format=csv&get=risk", GOOGLEBOT, cachedApp, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "3.5.140.1\n66.249.66.1\n",
  });
  const [header, fake, real] = (await response.text()).split("\r\n");
  const columns = header!.split(",");
  const at = columns.indexOf("risk.crawler.name");
  assert.deepEqual(columns.slice(at, at + 3), [
    "risk.crawler.name",
    "risk.crawler.operator",
    "risk.crawler.verified",
  ]);
  assert.ok(columns.includes("risk.reason") && columns.includes("risk.matches"), header);
  const cells = (row: string) =>
    row.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((c) => c.replace(/,$/, ""));
  assert.deepEqual(cells(fake!).slice(at, at + 3), ["Googlebot", "Google", "false"]);
  assert.deepEqual(cells(real!).slice(at, at + 3), ["Googlebot", "Google", "true"]);
});

Deno.test("20 alternating user agents on one address each get their own answer, with and without the cache", async () => {
  const agents = [GOOGLEBOT, CHROME, GOOGLEBOT, FIREFOX, BINGBOT];
  for (
    const path of ["/ip/3.5.140.1", "/ip/3.5.140.1?get=security,risk", "/ip/3.5.140.1?get=isThreat"]
  ) {
    for (let i = 0; i < 20; i++) {
      const userAgent = agents[i % agents.length]!;
      const cached = await (await get(path, userAgent)).text();
      const plain = await (await get(path, userAgent, plainApp)).text();
      assert.equal(cached, plain, `${path} ${userAgent}`);
      const answer = JSON.parse(cached).data;
      const fake = userAgent === GOOGLEBOT || userAgent === BINGBOT;
      // AWS is hosting (medium) either way; a fake says so in risk.
      assert.equal((answer.security ?? answer).isThreat, "medium", `${path} ${i}`);
      if (answer.risk) {
        assert.equal(
          answer.risk.crawler?.name ?? null,
          fake ? (userAgent === GOOGLEBOT ? "Googlebot" : "bingbot") : null,
        );
      }
      // The whole answer (no `get`) shows the parsed user agent: the string itself is keyed.
      if (answer.userAgent) assert.deepEqual(answer.userAgent, parseUserAgent(userAgent));
    }
  }
  // Where only the verdict shows, every browser is one entry: the claim is keyed, not the string.
  counts.hits = 0;
  await get("/ip/81.2.69.142?get=security", CHROME);
  await get("/ip/81.2.69.142?get=security", FIREFOX);
  await get("/ip/81.2.69.142?get=security", "curl/8.5.0");
  assert.equal(counts.hits, 2);
  // Where the verdict does not show, a crawler's claim is the same answer too.
  counts.hits = 0;
  await get("/ip/81.2.69.142?get=country", GOOGLEBOT);
  await get("/ip/81.2.69.142?get=country", CHROME);
  assert.equal(counts.hits, 1);
  for (const path of ["?get=isThreat", "?get=security.isThreat", "?get=reason"]) {
    const fake = await json(`/ip/81.2.69.142${path}`, GOOGLEBOT);
    const browser = await json(`/ip/81.2.69.142${path}`, CHROME);
    assert.notDeepEqual(fake, browser, path);
  }
  const googlebot = await json("/ip/81.2.69.142?get=security", GOOGLEBOT);
  assert.equal(googlebot.security.isThreat, "medium");
  assert.equal((await json("/ip/81.2.69.142?get=security", CHROME)).security.isThreat, "low");
});

Deno.test("/auth lets the verified crawler in before the hosting rule and denies the fake; X-IP-Risk names it", async () => {
  const auth = (client: string, userAgent: string) =>
    get("/auth", userAgent, cachedApp, { headers: { "x-forwarded-for": client } });
  const table: [string, string, number, string, string][] = [
    ["66.249.66.1", GOOGLEBOT, 204, "real-crawlers", "hosting,crawler:Googlebot"],
    ["3.5.140.1", GOOGLEBOT, 403, "fake-crawlers", "hosting,fake-crawler:Googlebot"],
    ["3.5.140.1", CHROME, 403, "no-hosting", "hosting"],
    ["8.8.8.8", GOOGLEBOT, 403, "fake-crawlers", "hosting,fake-crawler:Googlebot"],
    ["81.2.69.142", GOOGLEBOT, 403, "fake-crawlers", "fake-crawler:Googlebot"],
    ["81.2.69.142", CHROME, 204, "default", ""],
    ["157.55.39.1", BINGBOT, 204, "real-crawlers", "hosting,crawler:bingbot"],
    ["66.249.66.1", CHROME, 204, "real-crawlers", "hosting,crawler:Googlebot"],
  ];
  // Twice round: the gate's Responses are kept per answer, never shared across claims.
  for (let round = 0; round < 2; round++) {
    for (const [client, userAgent, status, rule, risk] of table) {
      const response = await auth(client, userAgent);
      await response.body?.cancel();
      assert.deepEqual(
        [
          response.status,
          response.headers.get("x-ip-policy-rule"),
          response.headers.get("x-ip-risk"),
        ],
        [status, rule, risk],
        `${client} ${userAgent}`,
      );
    }
  }
});

Deno.test("/status lists the crawler sources: installed ones with their crawler and tokens, the others absent", async () => {
  const status = await json("/status", null);
  const crawlers = status.sources.filter((s: { kind: string }) => s.kind === "crawler");
  const byName = Object.fromEntries(crawlers.map((s: { name: string }) => [s.name, s]));
  assert.deepEqual(
    Object.keys(byName).sort(),
    defaultCrawlerSources().map((s) => s.name).sort(),
  );
  const googlebot = byName["google-googlebot"];
  assert.equal(googlebot.status, "installed");
  assert.equal(googlebot.crawler, "Googlebot");
  assert.equal(googlebot.operator, "Google");
  assert.ok(googlebot.userAgents.includes("Googlebot-Image"));
  assert.equal(googlebot.dataDate, "2026-08-22T10:00:00.000Z");
  assert.match(googlebot.license, /^Not stated/);
  assert.equal(byName["apple-applebot"].status, "absent");
});

Deno.test("the OpenAPI Risk schema has crawler: an object of name, operator and verified, or null", async () => {
  const doc = await json("/openapi.json", null) ??
    await (await get("/openapi.json", null)).json();
  const crawler = doc.components.schemas.Risk.properties.crawler;
  assert.deepEqual(crawler.type, ["object", "null"]);
  assert.deepEqual(crawler.required, ["name", "operator", "verified"]);
  assert.equal(crawler.properties.verified.type, "boolean");
});

Deno.test("/asn/{n} lists the crawler lists naming part of the AS, after the security lists", async () => {
  // The gate's data: AS15169 holds Google's crawler block 66.249.64.0/19 (and 8.8.8.0/24).
  const gateData = await writeGateDataDir(CRAWLER_GATE_FEEDS);
  try {
    const opened = await openDataSet(gateData);
    const lookup = createLookup({
      data: opened,
      now: () => FIXED_NOW,
      parseUserAgent: createUserAgentParser(),
    });
    const asnApp = await fixtureApp({ slot: { current: { data: opened, lookup } } });
    const response = await get("/asn/15169?get=lists", null, asnApp);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const lists = JSON.parse(text).data.lists as {
      source: string;
      kind: string;
      ipv4Addresses: number;
    }[];
    assert.deepEqual(lists.map((l) => [l.kind, l.source]), [
      ["hosting", "x4bnet-datacenter-ipv4"],
      ["crawler", "google-googlebot"],
    ]);
    // Googlebot's prefixes inside 66.249.64.0/19, counted as addresses.
    const inBlock = snapshotPrefixes("googlebot-ipv4.txt").filter((cidr) => {
      const [a, b, c] = cidr.split(".").map(Number);
      return a === 66 && b === 249 && c! >= 64 && c! < 96;
    });
    const addresses = inBlock.reduce((n, cidr) => n + 2 ** (32 - Number(cidr.split("/")[1])), 0);
    assert.equal(lists[1]!.ipv4Addresses, addresses);
  } finally {
    await Deno.remove(gateData, { recursive: true });
  }
});
