import assert from "node:assert/strict";
import { countryCodes, countryFacts } from "../../../src/core/place/country.ts";
import { currencyInfo, hexUnicode } from "../../../src/core/place/currency.ts";
import { createCountryEnricher } from "../../../src/core/place/country_facts.ts";
import type { Currency } from "../../../src/base/types.ts";

const NO_CURRENCY: Currency = {
  code: null,
  symbol: null,
  name: null,
  name_plural: null,
  hex_unicode: null,
};

const CASES: Array<{ input: [code: string, country?: string]; expected: Currency }> = [
  {
    input: ["USD", "US"],
    expected: {
      code: "USD",
      symbol: "$",
      name: "US Dollar",
      name_plural: "US dollars",
      hex_unicode: "24",
    },
  },
  {
    input: ["EUR", "DE"],
    expected: { code: "EUR", symbol: "€", name: "Euro", name_plural: "euros", hex_unicode: "20ac" },
  },
  {
    input: ["GBP", "GB"],
    expected: {
      code: "GBP",
      symbol: "£",
      name: "British Pound",
      name_plural: "British pounds",
      hex_unicode: "a3",
    },
  },
  {
    // No en-JP locale in ICU: falls to the narrow symbol.
    input: ["JPY", "JP"],
    expected: {
      code: "JPY",
      symbol: "¥",
      name: "Japanese Yen",
      name_plural: "Japanese yen",
      hex_unicode: "a5",
    },
  },
  {
    input: ["INR", "IN"],
    expected: {
      code: "INR",
      symbol: "₹",
      name: "Indian Rupee",
      name_plural: "Indian rupees",
      hex_unicode: "20b9",
    },
  },
  {
    // ICU has no Swiss franc sign: the code is the symbol.
    input: ["CHF", "CH"],
    expected: {
      code: "CHF",
      symbol: "CHF",
      name: "Swiss Franc",
      name_plural: "Swiss francs",
      hex_unicode: "43,48,46",
    },
  },
  {
    // In Canada a dollar is "$" ...
    input: ["CAD", "CA"],
    expected: {
      code: "CAD",
      symbol: "$",
      name: "Canadian Dollar",
      name_plural: "Canadian dollars",
      hex_unicode: "24",
    },
  },
  {
    // ... without a country it is disambiguated ...
    input: ["CAD"],
    expected: {
      code: "CAD",
      symbol: "CA$",
      name: "Canadian Dollar",
      name_plural: "Canadian dollars",
      hex_unicode: "43,41,24",
    },
  },
  {
    // ... and in Canada the US dollar is "US$".
    input: ["USD", "CA"],
    expected: {
      code: "USD",
      symbol: "US$",
      name: "US Dollar",
      name_plural: "US dollars",
      hex_unicode: "55,53,24",
    },
  },
  {
    // en-CN is not an ICU locale: narrow "¥", not the international "CN¥".
    input: ["CNY", "CN"],
    expected: {
      code: "CNY",
      symbol: "¥",
      name: "Chinese Yuan",
      name_plural: "Chinese yuan",
      hex_unicode: "a5",
    },
  },
  {
    // en-PL gives only "PLN": narrow "zł".
    input: ["PLN", "PL"],
    expected: {
      code: "PLN",
      symbol: "zł",
      name: "Polish Zloty",
      name_plural: "Polish zlotys",
      hex_unicode: "7a,142",
    },
  },
  {
    input: ["usd", "US"],
    expected: {
      code: "USD",
      symbol: "$",
      name: "US Dollar",
      name_plural: "US dollars",
      hex_unicode: "24",
    },
  },
  { input: ["ABC", "US"], expected: NO_CURRENCY },
  { input: ["XXX"], expected: NO_CURRENCY }, // "no currency"
  { input: ["US", "US"], expected: NO_CURRENCY },
  { input: ["EURO"], expected: NO_CURRENCY },
  { input: [""], expected: NO_CURRENCY },
  { input: ["€"], expected: NO_CURRENCY },
  { input: ["US1"], expected: NO_CURRENCY },
];

for (const { input, expected } of CASES) {
  const label = input.length > 1 ? `${input[0]} in ${input[1]}` : `${input[0]} without a country`;
  Deno.test(`currencyInfo: ${JSON.stringify(label)} → ${expected.symbol ?? "all null"}`, () => {
    assert.deepEqual(currencyInfo(...input), expected);
  });
}

Deno.test("currencyInfo ignores a malformed country code and uses the no-country rule", () => {
  assert.deepEqual(currencyInfo("CAD", "ca"), currencyInfo("CAD"));
  assert.deepEqual(currencyInfo("CAD", "CAN"), currencyInfo("CAD"));
});

const HEX: Array<{ input: string; expected: string }> = [
  { input: "$", expected: "24" },
  { input: "€", expected: "20ac" },
  { input: "CHF", expected: "43,48,46" },
  { input: "R$", expected: "52,24" },
  { input: "F CFA", expected: "46,20,43,46,41" },
  { input: "𐆐", expected: "10190" }, // astral code point stays one entry
  { input: "", expected: "" },
];

for (const { input, expected } of HEX) {
  Deno.test(`hexUnicode(${JSON.stringify(input)}) is "${expected}"`, () => {
    assert.equal(hexUnicode(input), expected);
  });
}

// ---------------------------------------------------------------------------
// Currencies newer than Deno's ICU, and names in other languages.

Deno.test("currencyInfo keeps XCG (Curaçao, Sint Maarten since 2025) with names from the table", () => {
  assert.deepEqual(currencyInfo("XCG", "CW"), {
    code: "XCG",
    symbol: "Cg",
    name: "Caribbean Guilder",
    name_plural: "Caribbean guilders",
    hex_unicode: "43,67",
  });
});

Deno.test("every country's currency code in countries-list survives enrichment", () => {
  const enrich = createCountryEnricher();
  const dropped: string[] = [];
  for (const country of countryCodes()) {
    const expected = countryFacts(country)?.currencyCode ?? null;
    const currency = enrich(country).currency;
    if (currency.code !== expected || (expected !== null && currency.name === null)) {
      dropped.push(`${country}: ${expected} -> ${JSON.stringify(currency)}`);
    }
  }
  assert.deepEqual(dropped, []);
  assert.equal(enrich("CW").currency.code, "XCG");
  assert.equal(enrich("SX").currency.code, "XCG");
});

const IN_LANGUAGES: Array<{ input: [string, string, string]; name: string; plural: string }> = [
  { input: ["USD", "US", "de"], name: "US-Dollar", plural: "US-Dollar" },
  { input: ["USD", "US", "zh-CN"], name: "美元", plural: "美元" },
  { input: ["BRL", "BR", "pt-BR"], name: "Real brasileiro", plural: "Reais brasileiros" },
  { input: ["EUR", "FR", "fr"], name: "euro", plural: "euros" },
  { input: ["JPY", "JP", "ja"], name: "日本円", plural: "円" },
  // The table of currencies newer than ICU is English only.
  { input: ["XCG", "CW", "de"], name: "Caribbean Guilder", plural: "Caribbean guilders" },
];

for (const { input, name, plural } of IN_LANGUAGES) {
  Deno.test(`currencyInfo names ${input[0]} in ${input[2]} "${name}"`, () => {
    const currency = currencyInfo(...input);
    assert.equal(currency.name, name);
    assert.equal(currency.name_plural, plural);
    // The symbol is the country's, whatever the language.
    assert.equal(currency.symbol, currencyInfo(input[0], input[1]).symbol);
  });
}
