/**
 * The cache of rendered answers: every answer that comes from it equals the one
 * made fresh (the replay test's recorded requests, twice over, and again after
 * a reload), it is keyed by what the answer depends on, bounded, and counted.
 */

import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import {
  AnswerCache,
  ENTRY_OVERHEAD_BYTES,
  entryBytes,
  MAX_KEY_LENGTH,
} from "../../../src/service/app/answer_cache.ts";
import type { App } from "../../../src/service/app/app.ts";
import type { ServedSlot } from "../../../src/service/http/env.ts";
import { RECORDED, type Recorded, replay } from "./_replay.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { seededRandom } from "../../_random.ts";
import {
  CHROME,
  FIXED_NOW,
  fixtureApp,
  fixtureDataSet,
  fixtureLookup,
  peer,
  writeFixtureDataDir,
} from "../../_helpers.ts";

/** An app over `slot` with a cache of `entries` answers, counting into `counts`. */
async function cachedApp(slot: ServedSlot, entries = 1000) {
  const counts = { hits: 0, misses: 0, bytes: 0 };
  const cache = new AnswerCache({
    entries,
    sink: {
      hit: () => void counts.hits++,
      miss: () => void counts.misses++,
      bytes: (total) => void (counts.bytes = total),
    },
  });
  const app = await fixtureApp({ slot, answerCache: cache, config: { bulkMax: 10 } });
  return { send: (recorded: Recorded) => answered(app, recorded), counts };
}

/** What `app` answers to a recorded request: status, headers (sorted) and body. */
async function answered(app: App, recorded: Recorded) {
  const response = await replay(app, recorded);
  return {
    status: response.status,
    headers: [...response.headers].sort(),
    body: new TextDecoder().decode(await response.arrayBuffer()),
  };
}

Deno.test("every answer from the cache equals the one made fresh: the replay's requests, twice, and after a reload", async () => {
  assert.ok(RECORDED.length > 160);
  const slot: ServedSlot = {
    current: servedOf(await fixtureDataSet(), await fixtureLookup()),
  };
  const fresh = await fixtureApp({ slot, config: { bulkMax: 10 } });
  const { send, counts } = await cachedApp(slot);
  const made = (recorded: Recorded) => answered(fresh, recorded);
  for (let pass = 1; pass <= 2; pass++) {
    for (const recorded of RECORDED) {
      const label = `pass ${pass}: ${recorded.request.method} ${recorded.request.path}`;
      assert.deepEqual(await send(recorded), await made(recorded), label);
    }
  }
  assert.ok(counts.hits > 20, `answers came from the cache (${counts.hits} hits)`);
  assert.ok(counts.bytes > 0);

  // A reload: another data set (its own files, so its own version); the cache starts over.
  const data = await openDataSet(await writeFixtureDataDir());
  slot.current = servedOf(
    data,
    createLookup({ data, now: () => FIXED_NOW, parseUserAgent: createUserAgentParser() }),
  );
  const before = counts.hits;
  for (const recorded of RECORDED) {
    const label = `after the reload: ${recorded.request.method} ${recorded.request.path}`;
    const got = await send(recorded);
    assert.deepEqual(got, await made(recorded), label);
  }
  assert.ok(counts.misses > 0);
  assert.ok(counts.hits - before < counts.hits, "the reload's first answers were made fresh");
});

Deno.test("the cache keys what an answer depends on: format, get, lang, at, the user agent", async () => {
  const slot: ServedSlot = {
    current: servedOf(await fixtureDataSet(), await fixtureLookup()),
  };
  const { counts } = await cachedApp(slot);
  const cache = new AnswerCache({ entries: 1000 });
  const app = await fixtureApp({ slot, answerCache: cache });
  const get = async (path: string, userAgent = "curl/8") =>
    await (await app.fetch(
      new Request(`http://localhost${path}`, { headers: { "user-agent": userAgent } }),
      peer("81.2.69.142"),
    )).text();
  const plain = await get("/ip/81.2.69.142");
  assert.equal(await get("/ip/81.2.69.142"), plain);
  assert.notEqual(await get("/ip/81.2.69.142", "Mozilla/5.0 (Windows NT 10.0)"), plain);
  assert.notEqual(await get("/ip/81.2.69.142?format=xml"), plain);
  assert.notEqual(await get("/ip/81.2.69.142?lang=de"), plain);
  const country = await get("/ip/81.2.69.142?get=country");
  assert.equal(country, '{"success":true,"data":{"ip":"81.2.69.142","country":"United Kingdom"}}');
  // Without userAgent in the answer, another user agent is the same answer.
  assert.equal(await get("/ip/81.2.69.142?get=country", "Mozilla/5.0"), country);
  assert.equal(counts.hits, 0, "each app has its own cache");
});

Deno.test("the cache keys the user agent and the second for bare names too (browser, current_time)", async () => {
  let now = FIXED_NOW.getTime();
  const data = await fixtureDataSet();
  const lookup = createLookup({
    data,
    now: () => new Date(now),
    parseUserAgent: createUserAgentParser(),
  });
  const app = await fixtureApp({
    slot: { current: servedOf(data, lookup) },
    answerCache: new AnswerCache({ entries: 1000 }),
  });
  const get = async (path: string, userAgent = "curl/8") =>
    await (await app.fetch(
      new Request(`http://localhost${path}`, { headers: { "user-agent": userAgent } }),
      peer("81.2.69.142"),
    )).json();
  const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
  assert.equal((await get("/ip/81.2.69.142?get=browser", firefox)).data.browser.name, "Firefox");
  const chrome =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
  assert.equal((await get("/ip/81.2.69.142?get=browser", chrome)).data.browser.name, "Chrome");
  // The cache's second is the wall clock's: a fresh answer a second later shows the new time.
  const first = (await get("/ip/81.2.69.142?get=current_time")).data.current_time;
  now += 1000;
  await new Promise((resolve) => setTimeout(resolve, 1001));
  const later = (await get("/ip/81.2.69.142?get=current_time")).data.current_time;
  assert.notEqual(later, first);
});

Deno.test("the cache is bounded in entries and bytes, and 0 turns it off", () => {
  const served = { data: {}, lookup: {} } as never;
  const bytes: number[] = [];
  const cache = new AnswerCache({
    entries: 3,
    maxBytes: 64 * 400,
    sink: { hit: () => {}, miss: () => {}, bytes: (n) => void bytes.push(n) },
  });
  for (let i = 0; i < 10; i++) cache.set(served, `k${i}`, "x".repeat(100), null);
  const entry = 2 * 2 + 100 + ENTRY_OVERHEAD_BYTES;
  assert.equal(bytes.at(-1), 3 * entry, "three entries held");
  // Once full, an answer made once is not kept; made again, it is (and the oldest goes).
  assert.equal(cache.get(served, "k9", null), undefined);
  cache.set(served, "k9", "x".repeat(100), null);
  assert.equal(cache.get(served, "k9", null), "x".repeat(100));
  assert.equal(cache.get(served, "k0", null), undefined);
  assert.equal(bytes.at(-1), 3 * entry);
  // Entries over a 64th of the byte bound are not kept.
  cache.set(served, "big", "y".repeat(300), null);
  assert.equal(cache.get(served, "big", null), undefined);
  // An answer showing the time is kept for its second only.
  cache.set(served, "t", "z", 100);
  cache.set(served, "t", "z", 100); // the second time: kept
  assert.equal(cache.get(served, "t", 100), "z");
  assert.equal(cache.get(served, "t", 101), undefined);
  assert.equal(new AnswerCache({ entries: 0 }).enabled, false);
});

Deno.test("3,000 seeded requests (addresses, user agents, lang, get, formats, /me behind a proxy) answer the same with the answer cache and without", async () => {
  const random = seededRandom(50);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const slot: ServedSlot = {
    current: servedOf(await fixtureDataSet(), await fixtureLookup()),
  };
  const config = { bulkMax: 10, trustedProxies: ["127.0.0.1"] };
  const counts = { hits: 0, misses: 0 };
  const cache = new AnswerCache({
    entries: 200, // small: answers are evicted and made again as the requests go
    sink: { hit: () => void counts.hits++, miss: () => void counts.misses++, bytes: () => {} },
  });
  const cached = await fixtureApp({ slot, answerCache: cache, config });
  const fresh = await fixtureApp({ slot, config });
  const ADDRESSES = [
    "81.2.69.142",
    "81.2.69.160",
    "2a02:ec0::1",
    "1.1.1.1",
    "9.9.9.9",
    "10.1.2.3",
    "8.8.8.8", // no data: 404
    "1.2.3", // invalid
    "::ffff:81.2.69.142",
    "2002:5102:458e::1",
  ];
  const AGENTS = [
    null,
    "curl/8.5.0",
    CHROME,
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  ];
  const LANGS = [null, null, "de", "ja", "en", "de-AT", "xx"];
  const GETS = [
    null,
    null,
    "country",
    "browser",
    "current_time",
    "country,city,timezone",
    "userAgent,security",
    "isp,asn_org",
    "os.name",
    "nope",
  ];
  const FORMATS = [null, null, "json", "xml", "csv"];
  const request = (): [string, Record<string, string>, string] => {
    const query = new URLSearchParams();
    const lang = pick(LANGS);
    const get = pick(GETS);
    const format = pick(FORMATS);
    if (lang) query.set("lang", lang);
    if (get) query.set("get", get);
    if (format) query.set("format", format);
    const headers: Record<string, string> = {};
    const agent = pick(AGENTS);
    if (agent) headers["user-agent"] = agent;
    const q = query.size ? `?${query}` : "";
    if (random() < 0.3) {
      // /me behind the trusted proxy: the forwarded address is the caller's.
      headers["x-forwarded-for"] = `${pick(ADDRESSES)}, 127.0.0.1`;
      return [`/me${q}`, headers, "127.0.0.1"];
    }
    if (random() < 0.1) return [`/me${q}`, headers, pick(["81.2.69.142", "2a02:ec0::1"])];
    return [`/ip/${encodeURIComponent(pick(ADDRESSES))}${q}`, headers, "203.0.113.9"];
  };
  const answer = async (app: App, path: string, headers: Record<string, string>, from: string) => {
    const response = await app.fetch(
      new Request(`http://localhost${path}`, { headers }),
      peer(from),
    );
    return {
      status: response.status,
      headers: [...response.headers].sort(),
      body: await response.text(),
    };
  };
  for (let i = 0; i < 3000; i++) {
    const [path, headers, from] = request();
    const label = `request ${i}: ${path} ${JSON.stringify(headers)} from ${from}`;
    assert.deepEqual(
      await answer(cached, path, headers, from),
      await answer(fresh, path, headers, from),
      label,
    );
  }
  assert.ok(counts.hits > 100, `answers came from the cache (${counts.hits} hits)`);
  assert.ok(counts.misses > 200, `and were made again (${counts.misses} misses)`);
});

Deno.test("the cache counts what its entries cost: keys at 2 bytes a character, bodies at 1 or 2, and each entry's own objects", () => {
  const served = { data: {}, lookup: {} } as never;
  const cache = new AnswerCache({ entries: 100 });
  const entries: [string, string][] = [
    ["json\n\n\n*\ncurl/8\n81.2.69.142", '{"success":true,"data":{"city":"London"}}'],
    ["xml\n\n\n*\n\n2001:db8::1", "<city>Zürich</city>"], // Latin-1: one byte a character
    ["xml\nja\n\n*\n\n1.1.1.1", "<city>東京</city>"], // two bytes a character
  ];
  for (const [key, body] of entries) cache.set(served, key, body, null);
  assert.equal(cache.size, 3);
  const text = entries.reduce((sum, [key, body]) => sum + key.length + body.length, 0);
  const twoByte = entries[2]![1].length;
  assert.equal(
    cache.bytes,
    text + entries.reduce((sum, [key]) => sum + key.length, 0) + twoByte +
      3 * ENTRY_OVERHEAD_BYTES,
  );
  assert.equal(cache.bytes, entries.reduce((sum, [key, body]) => sum + entryBytes(key, body), 0));
});

Deno.test("an answer to a 30 KB user agent is served but not cached: its key is over the limit", async () => {
  const slot: ServedSlot = {
    current: { data: await fixtureDataSet(), lookup: await fixtureLookup() },
  };
  const counts = { hits: 0, misses: 0 };
  const cache = new AnswerCache({
    entries: 1000,
    sink: { hit: () => void counts.hits++, miss: () => void counts.misses++, bytes: () => {} },
  });
  const app = await fixtureApp({ slot, answerCache: cache });
  const get = async (userAgent: string) => {
    const response = await app.fetch(
      new Request("http://localhost/ip/81.2.69.142?get=browser", {
        headers: { "user-agent": userAgent },
      }),
      peer("81.2.69.142"),
    );
    return { status: response.status, body: await response.text() };
  };
  const hostile = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0 " +
    "x".repeat(30_000);
  assert.ok(hostile.length > MAX_KEY_LENGTH);
  const first = await get(hostile);
  assert.equal(first.status, 200);
  assert.match(first.body, /"browser":\{"name":"Firefox"/);
  assert.deepEqual(await get(hostile), first, "the same answer, made again");
  assert.deepEqual([cache.size, cache.bytes], [0, 0], "nothing kept");
  assert.deepEqual(counts, { hits: 0, misses: 0 }, "not looked up either");
  // A real browser's user agent is cached as before.
  await get("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0");
  await get("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0");
  assert.deepEqual([cache.size, counts.hits], [1, 1]);
});

Deno.test("the byte bound holds for entries of the longest keys cached", () => {
  const served = { data: {}, lookup: {} } as never;
  const maxBytes = 1024 * 1024;
  const cache = new AnswerCache({ entries: 100_000, maxBytes });
  const body = '{"success":true,"data":{"browser":{"name":"Firefox","version":"128.0"}}}';
  for (let i = 0; i < 2000; i++) {
    const key = `json\n\n\nbrowser\n${String(i).padEnd(MAX_KEY_LENGTH - 23, "u")}\n8.8.8.8`;
    assert.equal(key.length, MAX_KEY_LENGTH);
    cache.set(served, key, body, null);
    assert.ok(cache.bytes <= maxBytes, `${cache.bytes} bytes after ${i + 1} answers`);
  }
  const each = entryBytes("x".repeat(MAX_KEY_LENGTH), body);
  assert.equal(cache.size, Math.floor(maxBytes / each), "as many as the bound has room for");
});
