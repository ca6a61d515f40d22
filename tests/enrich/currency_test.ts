import assert from "node:assert/strict";
import { currencyInfo, hexUnicode } from "../../src/enrich/currency.ts";
import type { Currency } from "../../src/types.ts";

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
