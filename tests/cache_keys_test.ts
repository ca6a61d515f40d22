/**
 * Key drift, cache by cache (docs/design.md, "Every cache and memo"): for each
 * cache, the same inputs find the same entry, and changing one input the value
 * depends on finds another. The answer cache's own test is
 * tests/service/app/answer_key_test.ts.
 */

import assert from "node:assert/strict";
import { FIXED_NOW, fixtureDataSet, fixtureLookup } from "./_helpers.ts";
import { createCountryEnricher } from "../src/core/place/country_facts.ts";
import { createTimeZoneCache } from "../src/core/place/timezone.ts";
import { createUserAgentParser } from "../src/core/ua/parse.ts";
import { createLanguageResolver } from "../src/core/lookup/lookup.ts";
import { type RiskSignals, securityOf } from "../src/data/risk/security.ts";
import { parseFieldSelection, renderLookup } from "../src/core/format/mod.ts";
import { rememberedTexts } from "../src/base/shared_part.ts";
import { parseIp } from "../src/base/ip/parse.ts";
import { createAsnView } from "../src/core/asn/view.ts";
import { parseAsnSelection } from "../src/core/asn/layout.ts";
import { riskOf, TAG_BITS } from "../src/service/policy/facts.ts";
import { asnDataSet } from "./core/asn/_fixtures.ts";

Deno.test("decoded records: one entry per data offset", async () => {
  const city = (await fixtureDataSet()).city!;
  const at = (ip: string) => city.recordOffset(parseIp(ip).bytes);
  const london = at("81.2.69.142");
  const berlin = at("2a02:ec0::1");
  assert.notEqual(london, berlin);
  assert.equal(city.recordAt(london), city.recordAt(london), "the same offset, the same record");
  assert.notEqual(city.recordAt(london), city.recordAt(berlin), "another offset, another record");
});

Deno.test("places (front table and per record): one entry per City record and language", async () => {
  const lookup = await fixtureLookup();
  const place = (ip: string, lang?: string) => lookup.find(ip, { lang }).geoLocation;
  assert.equal(place("81.2.69.142"), place("81.2.69.143"), "the same record and language");
  assert.notEqual(place("81.2.69.142"), place("2a02:ec0::1"), "another record");
  assert.notEqual(place("81.2.69.142", "de"), place("81.2.69.142"), "another language");
  assert.equal(place("81.2.69.142", "de"), place("81.2.69.142", "de-DE"), "the same language");
});

Deno.test("country parts (flag, currency): one entry per country and language", async () => {
  const lookup = await fixtureLookup();
  const parts = (ip: string, lang?: string) => lookup.find(ip, { lang });
  const en = parts("81.2.69.142");
  assert.equal(parts("81.2.69.143").currency, en.currency);
  assert.equal(parts("81.2.69.143").flag, en.flag);
  assert.notEqual(parts("2a02:ec0::1").currency, en.currency, "another country");
  assert.notEqual(parts("81.2.69.142", "de").currency, en.currency, "another language");
  assert.notEqual(parts("81.2.69.142", "de").flag, en.flag, "another language: a part of its own");
});

Deno.test("resolved languages: one entry per lang as sent", () => {
  const resolve = createLanguageResolver(["de", "en", "pt-BR", "zh-CN"]);
  assert.equal(resolve("de-DE"), "de");
  assert.equal(resolve("de-DE"), "de", "remembered");
  assert.equal(resolve("pt"), "pt-BR");
  assert.equal(resolve("zh-TW"), "zh-CN");
  assert.equal(resolve(null), "en");
});

Deno.test("connections (front table and per ASN record): one entry per ASN record", async () => {
  const lookup = await fixtureLookup();
  const connection = (ip: string) => lookup.find(ip).connection;
  assert.equal(connection("81.2.69.142"), connection("81.2.69.160"));
  assert.notEqual(connection("81.2.69.142"), connection("2a02:ec0::1"));
});

Deno.test("country facts: one entry per country code and language", () => {
  const facts = createCountryEnricher();
  const gb = facts("GB", "en");
  assert.deepEqual(facts("GB", "en"), gb);
  assert.notDeepEqual(facts("FR", "en"), gb, "another country");
  assert.notEqual(facts("GB", "de").currency.name, gb.currency.name, "another language");
});

Deno.test("time zones: one entry per zone, its answer per second", () => {
  const zones = createTimeZoneCache();
  const now = FIXED_NOW;
  const london = zones("Europe/London", now);
  assert.equal(zones("Europe/London", new Date(now.getTime() + 999)), london, "the same second");
  assert.notEqual(zones("Europe/London", new Date(now.getTime() + 1000)), london, "a second later");
  assert.notEqual(zones("Europe/Berlin", now), zones("Europe/London", now), "another zone");
});

Deno.test("parsed user agents: one entry per user-agent text", () => {
  const parse = createUserAgentParser();
  const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
  assert.equal(parse(firefox), parse(firefox));
  assert.notEqual(parse(firefox), parse(firefox.replace("128.0", "129.0")));
});

Deno.test("security verdicts: one entry per combination of the six signals", () => {
  const none: RiskSignals = { tor: false, vpn: false, blocklisted: false, hosting: false };
  const base = securityOf(none);
  assert.equal(securityOf({ ...none }), base);
  // Each signal is a component of the key: another entry (identity), even where the verdict
  // shown is equal (hosting alone; a relay's VPN).
  for (
    const change of [
      { tor: true },
      { vpn: true },
      { blocklisted: true },
      { hosting: true },
      { relay: true },
      { allowed: true },
    ]
  ) {
    assert.notEqual(securityOf({ ...none, ...change }), base, JSON.stringify(change));
  }
});

Deno.test("remembered texts: one per shared part and serialiser", async () => {
  const lookup = await fixtureLookup();
  const london = lookup.find("81.2.69.142");
  const berlin = lookup.find("2a02:ec0::1");
  for (const format of ["json", "xml", "csv"] as const) renderLookup(london, null, format);
  renderLookup(berlin, null, "json");
  const texts = rememberedTexts(london.geoLocation)!;
  assert.ok(typeof texts.json === "string" && texts.xml !== undefined, "one text per serialiser");
  assert.notEqual(texts.json, texts.xml);
  assert.notEqual(rememberedTexts(berlin.geoLocation)!.json, texts.json, "another part");
});

Deno.test("get selections: one entry per get text", () => {
  assert.equal(parseFieldSelection("country,city"), parseFieldSelection("country,city"));
  assert.notEqual(parseFieldSelection("country,city"), parseFieldSelection("country"));
});

Deno.test("AS renderings: one entry per AS number, format and get names (per data set)", async () => {
  const data = await asnDataSet();
  const view = createAsnView();
  const answer = (n: string, get: string | null, format: "json" | "xml" | "csv" = "json") =>
    view.answer(n, data, parseAsnSelection(get), format);
  const base = await answer("100", null);
  assert.equal(await answer("AS100", null), base, "the same AS, written otherwise: the same entry");
  assert.notEqual(await answer("200", null), base, "another AS");
  assert.notEqual(await answer("100", null, "xml"), base, "another format");
  assert.notEqual(await answer("100", "prefixes"), base, "another get");
  assert.notEqual(
    await createAsnView().answer("100", await asnDataSet(), null, "json"),
    base,
    "another view",
  );
});

Deno.test("policy flag lists: one entry per combination of flags", () => {
  const none = riskOf(0);
  assert.equal(riskOf(0), none);
  const seen = new Set([none]);
  for (const flag of ["tor", "vpn", "hosting", "threat"]) {
    const one = riskOf(TAG_BITS.get(flag)!);
    assert.ok(!seen.has(one), flag);
    seen.add(one);
    assert.equal(riskOf(TAG_BITS.get(flag)!), one, `${flag}: the same entry`);
  }
});

Deno.test("records of a stream's scan: one entry per data offset, read while the caches are not filled", async () => {
  const city = (await fixtureDataSet()).city!;
  const offset = (ip: string) => city.recordOffset(parseIp(ip).bytes);
  const [london, again, berlin] = city.withoutCacheFills(() => [
    city.recordAt(offset("81.2.69.142")),
    city.recordAt(offset("81.2.69.142")),
    city.recordAt(offset("2a02:ec0::1")),
  ]);
  assert.equal(again, london);
  assert.notEqual(berlin, london);
});
