import assert from "node:assert/strict";
import { type CountryFacts, countryFacts } from "../../src/enrich/country.ts";
import { createCountryEnricher } from "../../src/enrich/enricher.ts";
import { currencyInfo } from "../../src/enrich/currency.ts";
import { flagFor } from "../../src/enrich/flag.ts";

const FACTS: Array<{ input: string; expected: CountryFacts | null }> = [
  // USD comes before USN in the data.
  { input: "US", expected: { capital: "Washington D.C.", dial_code: "+1", currencyCode: "USD" } },
  { input: "DE", expected: { capital: "Berlin", dial_code: "+49", currencyCode: "EUR" } },
  { input: "GB", expected: { capital: "London", dial_code: "+44", currencyCode: "GBP" } },
  { input: "JP", expected: { capital: "Tokyo", dial_code: "+81", currencyCode: "JPY" } },
  { input: "IN", expected: { capital: "New Delhi", dial_code: "+91", currencyCode: "INR" } },
  { input: "BR", expected: { capital: "Brasília", dial_code: "+55", currencyCode: "BRL" } },
  { input: "AU", expected: { capital: "Canberra", dial_code: "+61", currencyCode: "AUD" } },
  // Several phone codes (377, 381, 383, 386): the first.
  { input: "XK", expected: { capital: "Pristina", dial_code: "+377", currencyCode: "EUR" } },
  // Empty capital and no currency in the data.
  { input: "AQ", expected: { capital: null, dial_code: "+672", currencyCode: null } },
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
    currency: currencyInfo("CAD", "CA"),
    flag: flagFor("CA"),
  });
  assert.equal(enrich("CA").currency.symbol, "$");
  assert.equal(enrich("US").flag.flag_unicode, "U+1F1FA U+1F1F8");
});

const EMPTY = {
  capital: null,
  dial_code: null,
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
