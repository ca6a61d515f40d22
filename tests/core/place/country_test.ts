import assert from "node:assert/strict";
import { type CountryFacts, countryFacts } from "../../../src/core/place/country.ts";
import { createCountryEnricher } from "../../../src/core/place/country_facts.ts";
import { currencyInfo } from "../../../src/core/place/currency.ts";
import { flagFor } from "../../../src/core/place/flag.ts";

/** A row of countryFacts: capital, dial code, currency, continent, sole zone. */
function facts(
  capital: string | null,
  dial_code: string | null,
  currencyCode: string | null,
  continentCode: string,
  continent: string,
  timeZone: string | null,
): CountryFacts {
  return { capital, dial_code, currencyCode, continentCode, continent, timeZone };
}

const FACTS: Array<{ input: string; expected: CountryFacts | null }> = [
  // USD comes before USN in the data; many zones, so no sole zone.
  { input: "US", expected: facts("Washington D.C.", "+1", "USD", "NA", "North America", null) },
  // Germany has two zones in tzdata (Berlin, Busingen).
  { input: "DE", expected: facts("Berlin", "+49", "EUR", "EU", "Europe", null) },
  { input: "GB", expected: facts("London", "+44", "GBP", "EU", "Europe", "Europe/London") },
  { input: "JP", expected: facts("Tokyo", "+81", "JPY", "AS", "Asia", "Asia/Tokyo") },
  { input: "IN", expected: facts("New Delhi", "+91", "INR", "AS", "Asia", "Asia/Calcutta") },
  { input: "BR", expected: facts("Brasília", "+55", "BRL", "SA", "South America", null) },
  { input: "AU", expected: facts("Canberra", "+61", "AUD", "OC", "Oceania", null) },
  // Several phone codes (377, 381, 383, 386): the first. ICU lists no zone for XK.
  { input: "XK", expected: facts("Pristina", "+377", "EUR", "EU", "Europe", null) },
  // Empty capital and no currency in the data.
  { input: "AQ", expected: facts(null, "+672", null, "AN", "Antarctica", null) },
  { input: "ZZ", expected: null },
  { input: "us", expected: null },
  { input: "USA", expected: null },
  { input: "", expected: null },
];

for (const { input, expected } of FACTS) {
  Deno.test(`countryFacts(${JSON.stringify(input)}) is ${JSON.stringify(expected)}`, () => {
    assert.deepEqual(countryFacts(input), expected);
  });
}

Deno.test("countryFacts ignores inherited object keys", () => {
  assert.equal(countryFacts("__proto__"), null);
  assert.equal(countryFacts("constructor"), null);
});

Deno.test("createCountryEnricher combines facts, local-currency symbol and flag", () => {
  const enrich = createCountryEnricher();
  assert.deepEqual(enrich("CA"), {
    capital: "Ottawa",
    dial_code: "+1",
    continent: "North America",
    continentCode: "NA",
    timeZone: null,
    currency: currencyInfo("CAD", "CA"),
    flag: flagFor("CA"),
  });
  assert.equal(enrich("CA").currency.symbol, "$");
  assert.equal(enrich("US").flag.flag_unicode, "U+1F1FA U+1F1F8");
});

const EMPTY = {
  capital: null,
  dial_code: null,
  continent: null,
  continentCode: null,
  timeZone: null,
  currency: { code: null, symbol: null, name: null, name_plural: null, hex_unicode: null },
  flag: { flag_Icon: null, flag_unicode: null },
};

for (const input of [null, "", "us", "USA", "U1", "__proto__"]) {
  Deno.test(`createCountryEnricher gives all nulls for ${JSON.stringify(input)}`, () => {
    assert.deepEqual(createCountryEnricher()(input), EMPTY);
  });
}

Deno.test("createCountryEnricher: a well-formed code missing from the data keeps only its flag", () => {
  assert.deepEqual(createCountryEnricher()("EU"), { ...EMPTY, flag: flagFor("EU") });
});

Deno.test("createCountryEnricher memo hands out fresh objects that callers may mutate", () => {
  const enrich = createCountryEnricher();
  const first = enrich("DE");
  first.capital = "mutated";
  first.currency.symbol = "mutated";
  first.flag.flag_Icon = "mutated";
  const second = enrich("DE");
  assert.equal(second.capital, "Berlin");
  assert.equal(second.currency.symbol, "€");
  assert.equal(second.flag.flag_Icon, "🇩🇪");
});
