import assert from "node:assert/strict";
import { BadRequestError } from "../../../src/base/errors.ts";
import { LISTED_NAMES } from "../../../src/core/format/fields.ts";
import { applySelection, parseFieldSelection } from "../../../src/core/format/select.ts";
import type { Json } from "../../../src/base/types.ts";
import { sampleFailed, sampleResult } from "./_sample.ts";

const r = sampleResult();
const ua = r.userAgent;

/** Compares values and key order (deepEqual alone ignores key order). */
function assertSameJson(actual: unknown, expected: unknown, message?: string): void {
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), message);
}

Deno.test("parseFieldSelection returns null (everything) for absent or empty values", () => {
  for (const get of [undefined, null, "", "   ", ",", " , ,, "]) {
    assert.equal(parseFieldSelection(get), null, JSON.stringify(get));
  }
});

Deno.test("applySelection with a null selection returns the item itself", () => {
  assert.equal(applySelection(r, null), r);
});

const CASES: { get: string; expected: Record<string, Json> }[] = [
  // groups: the whole object under its name
  { get: "geoLocation", expected: { ip: r.ip, geoLocation: { ...r.geoLocation } } },
  { get: "security", expected: { ip: r.ip, security: { ...r.security } } },
  {
    get: "userAgent",
    expected: { ip: r.ip, userAgent: JSON.parse(JSON.stringify(ua)) },
  },
  // several groups: layout order, not request order
  {
    get: "currency,geoLocation",
    expected: { ip: r.ip, geoLocation: { ...r.geoLocation }, currency: { ...r.currency } },
  },
  // bare leaves: flat under data, canonical names, layout order
  { get: "country", expected: { ip: r.ip, country: "United States" } },
  { get: "city", expected: { ip: r.ip, city: null } },
  {
    get: "isThreat,country,code",
    expected: { ip: r.ip, country: "United States", code: "USD", isThreat: "low" },
  },
  { get: "postal_code", expected: { ip: r.ip, postal_Code: null } },
  { get: "FLAG_ICON", expected: { ip: r.ip, flag_Icon: "🇺🇸" } },
  { get: "name", expected: { ip: r.ip, name: "US Dollar" } },
  {
    get: "time_zone,asn_number",
    expected: { ip: r.ip, time_zone: "America/Chicago", asn_number: 15169 },
  },
  // userAgent parts are bare names too
  { get: "browser", expected: { ip: r.ip, browser: { name: "Chrome", version: "125.0.0.0" } } },
  { get: "cpu,device", expected: { ip: r.ip, device: { ...ua.device }, cpu: { ...ua.cpu } } },
  // case-insensitivity and spaces around names
  {
    get: " CITY ,  Country\t, isTOR ",
    expected: { ip: r.ip, country: "United States", city: null, isTor: false },
  },
  // dotted paths: kept inside their parents, merged, layout order
  { get: "currency.code", expected: { ip: r.ip, currency: { code: "USD" } } },
  {
    get: "currency.name,currency.code",
    expected: { ip: r.ip, currency: { code: "USD", name: "US Dollar" } },
  },
  {
    get: "userAgent.os,userAgent.browser.name",
    expected: { ip: r.ip, userAgent: { browser: { name: "Chrome" }, os: { ...ua.os } } },
  },
  {
    get: "userAgent.browser.version,USERAGENT.BROWSER.NAME,userAgent.cpu.architecture",
    expected: {
      ip: r.ip,
      userAgent: {
        browser: { name: "Chrome", version: "125.0.0.0" },
        cpu: { architecture: "amd64" },
      },
    },
  },
  {
    get: "security.isThreat,geoLocation.latitude,geoLocation.longitude",
    expected: {
      ip: r.ip,
      geoLocation: { latitude: 37.751, longitude: -97.822 },
      security: { isThreat: "low" },
    },
  },
  // a whole node absorbs the paths below it, whatever the request order
  { get: "currency.code,currency", expected: { ip: r.ip, currency: { ...r.currency } } },
  {
    get: "userAgent.browser.name,userAgent.browser",
    expected: { ip: r.ip, userAgent: { browser: { ...ua.browser } } },
  },
  // a bare leaf and a path to the same field give both keys; group entry first
  { get: "code,currency.code", expected: { ip: r.ip, currency: { code: "USD" }, code: "USD" } },
  {
    get: "country,geoLocation.city",
    expected: { ip: r.ip, geoLocation: { city: null }, country: "United States" },
  },
  // ip is always there, first, once
  { get: "ip", expected: { ip: r.ip } },
  { get: "isVpn,IP,ip", expected: { ip: r.ip, isVpn: false } },
  // duplicates collapse
  { get: "city,city,CITY", expected: { ip: r.ip, city: null } },
  // empty entries are skipped
  { get: ",code,,", expected: { ip: r.ip, code: "USD" } },
];

for (const c of CASES) {
  Deno.test(`applySelection with get=${JSON.stringify(c.get)} gives the expected keys in layout order`, () => {
    const selection = parseFieldSelection(c.get);
    assert.ok(selection !== null);
    const out = applySelection(r, selection);
    assert.deepEqual(out, c.expected);
    assertSameJson(out, c.expected);
  });
}

Deno.test("parseFieldSelection reports canonical names in layout order", () => {
  assert.deepEqual(parseFieldSelection("currency.CODE, city ,GEOLOCATION")?.names, [
    "geoLocation",
    "city",
    "currency.code",
  ]);
});

Deno.test("parseFieldSelection returns the cached selection for a repeated value", () => {
  assert.equal(parseFieldSelection("city,code"), parseFieldSelection("city,code"));
});

Deno.test("applySelection passes a FailedItem through unchanged, whatever the selection", () => {
  const failed = sampleFailed();
  for (const get of ["city", "currency.code", "geoLocation", "ip"]) {
    const out = applySelection(failed, parseFieldSelection(get));
    assert.deepEqual(out, { ip: failed.ip, error: failed.error });
    assertSameJson(out, failed);
  }
});

Deno.test("applySelection does not modify its input and reuses one plan for many items", () => {
  const selection = parseFieldSelection("city,currency.code,security");
  const a = sampleResult("1.1.1.1");
  const b = sampleResult("2.2.2.2");
  b.geoLocation.city = "Paris";
  const before = JSON.stringify(a);
  assert.deepEqual(applySelection(a, selection), {
    ip: "1.1.1.1",
    city: null,
    currency: { code: "USD" },
    security: { ...a.security },
  });
  assert.equal(applySelection(b, selection).city, "Paris");
  assert.equal(applySelection(b, selection).ip, "2.2.2.2");
  assert.equal(JSON.stringify(a), before);
});

const BAD: { get: string; unknown: string[] }[] = [
  { get: "foo", unknown: ["foo"] },
  { get: "city,foo, bar ", unknown: ["foo", "bar"] },
  { get: "version", unknown: ["version"] },
  { get: "type", unknown: ["type"] },
  { get: "architecture", unknown: ["architecture"] },
  { get: "geoLocation.foo", unknown: ["geoLocation.foo"] },
  { get: "currency.code.x", unknown: ["currency.code.x"] },
  { get: "userAgent.name", unknown: ["userAgent.name"] },
  { get: "city.", unknown: ["city."] },
  { get: "data", unknown: ["data"] },
  { get: "responseArray", unknown: ["responseArray"] },
  { get: "__proto__", unknown: ["__proto__"] },
  { get: "constructor", unknown: ["constructor"] },
  { get: "ci ty", unknown: ["ci ty"] },
  { get: 'x"y', unknown: ['x"y'] },
];

for (const c of BAD) {
  Deno.test(`parseFieldSelection rejects get=${JSON.stringify(c.get)} naming the bad name and listing valid ones`, () => {
    assert.throws(
      () => parseFieldSelection(c.get),
      (error: unknown) => {
        assert.ok(error instanceof BadRequestError);
        assert.equal(error.code, "bad_request");
        for (const name of c.unknown) assert.ok(error.message.includes(JSON.stringify(name)));
        const noun = c.unknown.length === 1 ? "field" : "fields";
        assert.ok(error.message.startsWith(`Unknown ${noun} `), error.message);
        assert.ok(error.message.includes(" in get: valid names are ip, geoLocation, continent, "));
        for (const name of LISTED_NAMES) assert.ok(error.message.includes(name), name);
        assert.ok(error.message.includes("currency.code"));
        return true;
      },
    );
  });
}

Deno.test("parseFieldSelection shortens a long list of unknown names in the message", () => {
  const names = Array.from({ length: 12 }, (_, i) => `bad${i}`);
  const long = "z".repeat(500);
  assert.throws(() => parseFieldSelection([...names, long].join(",")), (error: unknown) => {
    assert.ok(error instanceof BadRequestError);
    assert.ok(error.message.includes('"bad0", "bad1", "bad2", "bad3", "bad4" (and 8 more)'));
    assert.ok(!error.message.includes("bad5"));
    assert.ok(error.message.length < 1200, String(error.message.length));
    return true;
  });
  assert.throws(() => parseFieldSelection(long), (error: unknown) => {
    assert.ok(error instanceof BadRequestError);
    assert.ok(error.message.includes(`"${"z".repeat(64)}…"`));
    assert.ok(!error.message.includes("z".repeat(65)));
    return true;
  });
});

Deno.test("parseFieldSelection does not cache failures", () => {
  assert.throws(() => parseFieldSelection("nope"), BadRequestError);
  assert.throws(() => parseFieldSelection("nope"), BadRequestError);
});
