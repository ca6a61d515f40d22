import assert from "node:assert/strict";
import { BadRequestError, InvalidIpError, NotFoundError } from "../../../src/base/errors.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { applySelection, parseFieldSelection } from "../../../src/core/format/select.ts";
import { fixtureDataSet, fixtureLookup } from "../../_helpers.ts";

const lookup = await fixtureLookup();

Deno.test("lookup() reads the City layout: names, codes, region, postal, location", () => {
  const { geoLocation } = lookup.find("81.2.69.142");
  assert.deepEqual(geoLocation, {
    continent: "Europe",
    continentCode: "EU",
    country: "United Kingdom",
    countryCode: "GB",
    capital: "London",
    region: "England",
    regionCode: "ENG",
    city: "London",
    postal_Code: "EC2V",
    dial_code: "+44",
    is_in_eu: false,
    latitude: 51.5142,
    longitude: -0.0931,
    accuracy_radius: 50,
  });
});

Deno.test("lookup() reports the ASN of an IPv6 address, with isp and org falling back to it", () => {
  assert.deepEqual(lookup.find("2a02:ec0:1::9").connection, {
    asn_number: 3320,
    asn_org: "Deutsche Telekom AG",
    isp: "Deutsche Telekom AG",
    org: "Deutsche Telekom AG",
    domain: null,
    connection_type: null,
  });
});

Deno.test("lookup() takes is_in_eu from the database's EU flag", () => {
  assert.equal(lookup.find("2a02:ec0::1").geoLocation.is_in_eu, true);
  assert.equal(lookup.find("81.2.69.1").geoLocation.is_in_eu, false);
});

Deno.test("lookup() falls back to the registered country, with its continent", () => {
  const result = lookup.find("1.1.1.1");
  assert.equal(result.geoLocation.countryCode, "AU");
  assert.equal(result.geoLocation.capital, "Canberra");
  assert.equal(result.flag.flag_Icon, "🇦🇺");
  assert.equal(result.currency.code, "AUD");
  assert.equal(result.geoLocation.city, null);
  // The record has no continent: it follows from the country (English name).
  assert.equal(result.geoLocation.continentCode, "OC");
  assert.equal(result.geoLocation.continent, "Oceania");
  // Australia has a dozen zones: none is guessed.
  assert.equal(result.timezone.time_zone, null);
});

Deno.test("lookup() answers an ASN-only address with every geo key present and null", () => {
  const result = lookup.find("9.9.9.9");
  assert.ok(Object.values(result.geoLocation).every((v) => v === null || v === false));
  assert.deepEqual(result.flag, { flag_Icon: null, flag_unicode: null });
  assert.equal(result.currency.code, null);
  assert.equal(result.connection.asn_number, 19281);
});

Deno.test("lookup() computes the time zone at the injected instant, across a DST change", async () => {
  const at = async (iso: string) =>
    (await fixtureLookup(new Date(iso))).find("2a02:ec0::1").timezone;
  assert.deepEqual(await at("2026-03-29T00:59:59Z"), {
    time_zone: "Europe/Berlin",
    abbr: "CET",
    offset: 3600,
    is_dst: false,
    utc: "+01:00",
    current_time: "2026-03-29T01:59:59+01:00",
  });
  assert.deepEqual(await at("2026-03-29T01:00:00Z"), {
    time_zone: "Europe/Berlin",
    abbr: "CEST",
    offset: 7200,
    is_dst: true,
    utc: "+02:00",
    current_time: "2026-03-29T03:00:00+02:00",
  });
});

Deno.test("lookup() returns names in another language and falls back to English", () => {
  const de = lookup.find("81.2.69.142", { lang: "de" }).geoLocation;
  assert.equal(de.country, "Vereinigtes Königreich");
  assert.equal(de.continent, "Europa");
  assert.equal(de.region, "England"); // no German name in the record
  assert.equal(lookup.find("81.2.69.142", { lang: "JA" }).geoLocation.city, "ロンドン");
  assert.throws(
    () => lookup.find("81.2.69.142", { lang: "xx" }),
    /Unsupported lang "xx".*en, de, ja/,
  );
});

Deno.test("lookup() answers each language in turn from its cached places, never another's", async () => {
  const fresh = await fixtureLookup();
  for (let round = 0; round < 3; round++) {
    assert.equal(
      fresh.find("81.2.69.142", { lang: "de" }).geoLocation.country,
      "Vereinigtes Königreich",
    );
    assert.equal(fresh.find("81.2.69.142").geoLocation.country, "United Kingdom");
    assert.equal(fresh.find("81.2.69.142", { lang: "ja" }).geoLocation.city, "ロンドン");
    assert.equal(fresh.find("81.2.69.142", { lang: "en" }).geoLocation.city, "London");
  }
});

Deno.test("lookup() with a selection that leaves out timezone answers every selected field alike", () => {
  for (const get of ["country,asn_org,security", "geoLocation,connection", "city,isTor", "flag"]) {
    const selection = parseFieldSelection(get)!;
    assert.equal(selection.timezone, false, get);
    for (const ip of ["81.2.69.142", "2a02:ec0:1::9", "1.1.1.1"]) {
      assert.deepEqual(
        applySelection(lookup.find(ip, { selection }), selection),
        applySelection(lookup.find(ip), selection),
        `${get} ${ip}`,
      );
    }
  }
  const zone = parseFieldSelection("country,current_time")!;
  assert.equal(zone.timezone, true);
  assert.equal(lookup.find("81.2.69.142", { selection: zone }).timezone.time_zone, "Europe/London");
});

const LANG_FALLBACKS: Array<{ lang: string; country: string }> = [
  { lang: "de-DE", country: "Vereinigtes Königreich" },
  { lang: "de-AT", country: "Vereinigtes Königreich" },
  { lang: "DE-at-1996", country: "Vereinigtes Königreich" },
  { lang: "ja-JP", country: "United Kingdom" }, // ja has no name for the country: English
  { lang: "en-GB", country: "United Kingdom" },
];

for (const { lang, country } of LANG_FALLBACKS) {
  Deno.test(`lookup() with lang=${lang} falls back to the database's language`, () => {
    assert.equal(lookup.find("81.2.69.142", { lang }).geoLocation.country, country);
  });
}

Deno.test("lookup() names the currency in the requested language", () => {
  assert.equal(lookup.find("81.2.69.142").currency.name, "British Pound");
  const de = lookup.find("81.2.69.142", { lang: "de-DE" }).currency;
  assert.equal(de.name, "Britisches Pfund");
  assert.equal(de.code, "GBP");
  assert.equal(de.symbol, "£");
});

// Not one language tag: 400 naming the value, never a fallback on its first part.
const NOT_TAGS = ["en-", "en--US", "de-<b>", "en-US,fr;q=0.5", "fr-FR,de", "de_AT", "-de", "de DE"];

for (const lang of NOT_TAGS) {
  Deno.test(`lookup() refuses lang=${JSON.stringify(lang)}: not a language tag`, () => {
    assert.throws(
      () => lookup.find("81.2.69.142", { lang }),
      (error: unknown) =>
        error instanceof BadRequestError &&
        error.message ===
          `Invalid lang ${JSON.stringify(lang)}: expected one language tag such as de or pt-BR`,
    );
  });
}

Deno.test("lookup() refuses an unknown lang, echoing at most 64 characters of it", () => {
  const long = `qq-x-${Array(2000).fill("abcdefgh").join("-")}`; // a tag, of no language carried
  assert.throws(() => lookup.find("81.2.69.142", { lang: long }), (error: unknown) => {
    assert.ok(error instanceof BadRequestError);
    assert.ok(error.message.startsWith(`Unsupported lang "${long.slice(0, 64)}…"`), error.message);
    assert.ok(error.message.length < 200, `${error.message.length} characters`);
    return true;
  });
});

Deno.test("lookup() attaches the user agent per call, not cached with the address", () => {
  const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
  const a = lookup.find("81.2.69.142", { userAgent: firefox });
  const b = lookup.find("81.2.69.142", {});
  assert.equal(a.userAgent.browser.name, "Firefox");
  assert.equal(a.userAgent.device.type, "desktop");
  assert.equal(b.userAgent.browser.name, null);
  assert.equal(b.userAgent.cpu.architecture, "Unknown");
});

Deno.test("lookup() reports every security flag unknown (null) while no feed is loaded", () => {
  assert.deepEqual(lookup.find("81.2.69.142").security, {
    isVpn: null,
    isTor: null,
    isThreat: null,
  });
});

Deno.test("lookup() answers an IPv4-mapped IPv6 address as the IPv4 address", () => {
  assert.equal(lookup.find("::ffff:81.2.69.142").ip, "81.2.69.142");
  assert.equal(lookup.find("::FFFF:5102:458e").geoLocation.city, "London");
});

const rejected: { input: string; reason: RegExp }[] = [
  { input: "fe80::1%eth0", reason: /zone id/ },
  { input: "81.2.69.0/24", reason: /CIDR/ },
  { input: "081.2.69.142", reason: /leading zero/ },
  { input: " 81.2.69.142", reason: /spaces/ },
  { input: "81.2.69.142 ", reason: /spaces/ },
  { input: "1.2.3", reason: /4 decimal octets/ },
  { input: "2a02:ec0:::1", reason: /':::' is not valid/ },
  { input: "", reason: /empty/ },
];

Deno.test("lookup() rejects malformed addresses with a typed error naming the input", () => {
  for (const { input, reason } of rejected) {
    assert.throws(() => lookup.find(input), (error: unknown) => {
      assert.ok(error instanceof InvalidIpError, input);
      assert.ok(error.message.includes(JSON.stringify(input)), error.message);
      assert.match(error.message, reason);
      return true;
    });
  }
});

Deno.test("lookup() names the reserved range of an address no source knows", () => {
  const cases = [
    ["192.168.1.1", "private network"],
    ["127.0.0.1", "loopback"],
    ["169.254.0.1", "link-local"],
    ["2001:db8::1", "documentation"],
    ["::1", "loopback"],
  ];
  for (const [ip, range] of cases) {
    assert.throws(() => lookup.find(ip!), (error: unknown) => {
      assert.ok(error instanceof NotFoundError);
      assert.match(error.message, new RegExp(`${range} range`));
      return true;
    });
  }
  assert.throws(
    () => lookup.find("8.8.8.8"),
    (e: unknown) => e instanceof NotFoundError && !/range/.test(e.message),
  );
});

Deno.test("lookup() shares cached place objects between calls but never the user agent part", async () => {
  const data = await fixtureDataSet();
  const fresh = createLookup({
    data,
    now: () => new Date(0),
    parseUserAgent: createUserAgentParser(),
  });
  const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
  const chrome =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
  const first = fresh.find("81.2.69.142", { userAgent: firefox });
  const second = fresh.find("81.2.69.7", { userAgent: chrome });
  const third = fresh.find("81.2.69.142");
  assert.equal(first.geoLocation, second.geoLocation); // same record → same cached projection
  assert.ok(Object.isFrozen(first.geoLocation));
  // Same address, different user agents: each answer carries its own.
  assert.equal(first.userAgent.browser.name, "Firefox");
  assert.equal(second.userAgent.browser.name, "Chrome");
  assert.equal(third.userAgent.browser.name, null);
  assert.equal(first.geoLocation, third.geoLocation);
});
