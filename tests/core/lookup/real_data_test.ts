import assert from "node:assert/strict";
import { createLookup, type Lookup } from "../../../src/core/lookup/lookup.ts";
import { type DataSet, openDataSet } from "../../../src/data/sources/data_set.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { assertLayout, SPEC_LAYOUT } from "../../_layout.ts";
import { DEFAULT_DATA_DIR, FIXED_NOW, fixtureApp } from "../../_helpers.ts";

// The real default data in data/ (GeoLite2-City + the compiled ASN database), built by
// `deno task data`, which `deno task test` runs first.

let real: Promise<{ data: DataSet; lookup: Lookup }> | null = null;

/** Opens data/ once; a missing manifest fails every test with the command that builds it. */
function realData(): Promise<{ data: DataSet; lookup: Lookup }> {
  real ??= (async () => {
    try {
      await Deno.stat(`${DEFAULT_DATA_DIR}/manifest.json`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      throw new Error(
        `${DEFAULT_DATA_DIR}/manifest.json is missing: run "deno task data" to build the default data`,
      );
    }
    const data = await openDataSet(DEFAULT_DATA_DIR);
    const lookup = createLookup({
      data,
      now: () => FIXED_NOW,
      parseUserAgent: createUserAgentParser(),
    });
    return { data, lookup };
  })();
  return real;
}

/** Known answers of the pinned data (the EU addresses were checked with mmdblookup first). */
const cases: {
  ip: string;
  countryCode: string;
  is_in_eu: boolean;
  asn?: number;
  asn_org?: string;
  city?: boolean;
  currency?: string;
  capital?: string;
  dial_code?: string;
  flag?: string;
  time_zone?: string;
}[] = [
  { ip: "8.8.8.8", countryCode: "US", is_in_eu: false, asn: 15169, asn_org: "Google LLC" },
  { ip: "2001:4860:4860::8888", countryCode: "US", is_in_eu: false, asn: 15169 },
  { ip: "81.2.69.142", countryCode: "GB", is_in_eu: false, city: true, currency: "GBP" },
  {
    ip: "5.9.0.1", // Hetzner, Falkenstein
    countryCode: "DE",
    is_in_eu: true,
    city: true,
    currency: "EUR",
    capital: "Berlin",
    dial_code: "+49",
    flag: "🇩🇪",
    time_zone: "Europe/Berlin",
  },
  {
    ip: "80.67.169.12", // FDN's public resolver
    countryCode: "FR",
    is_in_eu: true,
    currency: "EUR",
    capital: "Paris",
    dial_code: "+33",
    flag: "🇫🇷",
    time_zone: "Europe/Paris",
  },
];

Deno.test("lookup() on the real data answers known addresses (country, EU flag, ASN, country facts)", async () => {
  const { lookup } = await realData();
  for (const c of cases) {
    const result = lookup.find(c.ip);
    const { geoLocation: geo, connection } = result;
    assert.equal(result.ip, c.ip);
    assert.equal(geo.countryCode, c.countryCode, c.ip);
    assert.equal(geo.is_in_eu, c.is_in_eu, c.ip);
    if (c.asn !== undefined) assert.equal(connection.asn_number, c.asn, c.ip);
    if (c.asn_org !== undefined) assert.equal(connection.asn_org, c.asn_org, c.ip);
    if (c.city) assert.ok(geo.city, `${c.ip}: city expected, got ${geo.city}`);
    if (c.currency) assert.equal(result.currency.code, c.currency, c.ip);
    if (c.capital) assert.equal(geo.capital, c.capital, c.ip);
    if (c.dial_code) assert.equal(geo.dial_code, c.dial_code, c.ip);
    if (c.flag) assert.equal(result.flag.flag_Icon, c.flag, c.ip);
    if (c.time_zone) assert.equal(result.timezone.time_zone, c.time_zone, c.ip);
    // Facts every located address has in GeoLite2-City.
    assert.ok(geo.country && geo.continent && geo.continentCode, c.ip);
    assert.equal(typeof geo.latitude, "number", c.ip);
    assert.equal(typeof geo.accuracy_radius, "number", c.ip);
    assert.ok(result.timezone.current_time, c.ip);
    assert.ok(connection.asn_number !== null && connection.asn_org, c.ip);
  }
});

Deno.test("lookup() on the real data fills every key of the response layout", async () => {
  const { lookup } = await realData();
  for (const { ip } of cases) assertLayout(lookup.find(ip), SPEC_LAYOUT, ip);
});

Deno.test("lookup() on the real data names a European address in German with lang=de", async () => {
  const { lookup } = await realData();
  const de = lookup.find("5.9.0.1", { lang: "de" }).geoLocation;
  assert.equal(de.country, "Deutschland");
  assert.equal(de.continent, "Europa");
  assert.equal(lookup.find("5.9.0.1").geoLocation.country, "Germany");
});

Deno.test("lookup() on the real data: lang=de-DE, zh and pt fall back to de, zh-CN and pt-BR", async () => {
  const { lookup } = await realData();
  assert.equal(lookup.find("5.9.0.1", { lang: "de-DE" }).geoLocation.country, "Deutschland");
  assert.equal(lookup.find("5.9.0.1", { lang: "zh" }).geoLocation.country, "德国");
  assert.equal(lookup.find("5.9.0.1", { lang: "pt" }).geoLocation.country, "Alemanha");
  assert.equal(lookup.find("5.9.0.1", { lang: "pt" }).currency.name, "Euro");
  assert.equal(lookup.find("8.8.8.8", { lang: "zh" }).currency.name, "美元");
});

Deno.test("lookup() on the real data fills continent and sole time zone from a registered country", async () => {
  const { lookup } = await realData();
  // GeoLite2-City knows only the registered country of these blocks (checked with mmdblookup).
  const greek = lookup.find("193.5.18.25");
  assert.equal(greek.geoLocation.countryCode, "GR");
  assert.equal(greek.geoLocation.continentCode, "EU");
  assert.equal(greek.geoLocation.continent, "Europe");
  assert.equal(greek.timezone.time_zone, "Europe/Athens");
  assert.equal(greek.timezone.utc, "+03:00"); // FIXED_NOW is in July: EEST
  const australian = lookup.find("1.1.1.1");
  assert.equal(australian.geoLocation.continent, "Oceania");
  assert.equal(australian.timezone.time_zone, null); // a dozen zones: none is guessed
});

Deno.test("lookup() on the real data reads the manifest written by the data build", async () => {
  const { data } = await realData();
  const kinds = data.manifest.sources.map((e) => `${e.kind}: ${e.databaseType}`).sort();
  assert.deepEqual(kinds, ["asn: GeoLite2-ASN", "city: GeoLite2-City"]);
  assert.equal(data.city?.metadata.databaseType, "GeoLite2-City");
  assert.equal(data.asn?.metadata.databaseType, "GeoLite2-ASN");
});

Deno.test("GET /ip/8.8.8.8 through the real app answers 200 with the real data", async () => {
  const { data, lookup } = await realData();
  const app = await fixtureApp({ data, lookup, config: { bulkMax: 100 } });
  const response = await app.request("/ip/8.8.8.8");
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.success, true);
  assertLayout(body.data, SPEC_LAYOUT);
  assert.deepEqual(body.data, JSON.parse(JSON.stringify(lookup.find("8.8.8.8"))));
  assert.equal(body.data.geoLocation.countryCode, "US");
  assert.equal(body.data.connection.asn_number, 15169);
  assert.equal(body.data.connection.asn_org, "Google LLC");
});
