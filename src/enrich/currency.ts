/**
 * Currency names and symbols from ICU (through `Intl`), no data files.
 *
 * @module
 */

import type { Currency } from "../types.ts";

/** Three ASCII letters, either case (Intl accepts "usd" and means "USD"). */
const CURRENCY_CODE = /^[A-Za-z]{3}$/;

/** Two upper-case ASCII letters. */
const COUNTRY_CODE = /^[A-Z]{2}$/;

/** A Currency with every field null: unknown or malformed code. */
function noCurrency(): Currency {
  return { code: null, symbol: null, name: null, name_plural: null, hex_unicode: null };
}

/**
 * Lower-case hex of each code point of `symbol`, comma-separated:
 * "$" → "24", "€" → "20ac", "CHF" → "43,48,46", "" → "".
 * Iterates code points, not UTF-16 units, so astral symbols stay whole.
 */
export function hexUnicode(symbol: string): string {
  const out: string[] = [];
  for (const ch of symbol) out.push((ch.codePointAt(0) ?? 0).toString(16));
  return out.join(",");
}

/** The currency part of formatting 2 units of `code` in `locale`, and the locale ICU used. */
function currencyPart(
  locale: string,
  code: string,
  display: "symbol" | "narrowSymbol" | "name",
): { text: string; locale: string } {
  const format = new Intl.NumberFormat(locale, {
    style: "currency",
    currency: code,
    currencyDisplay: display,
  });
  const part = format.formatToParts(2).find((p) => p.type === "currency");
  return { text: part?.value ?? code, locale: format.resolvedOptions().locale };
}

/**
 * The symbol people in `countryCode` would write for `code`.
 *
 * Rule:
 * 1. With a country whose English locale ICU really has (`en-CA`, `en-DE`,
 *    `en-IN`, … i.e. the NumberFormat resolves to `en-XX` itself, not plain
 *    `en`): that locale's "symbol". So CAD in CA is "$" (not "CA$"), ZAR in ZA
 *    "R", while USD in CA stays "US$".
 * 2. Otherwise, or when step 1 only yields the ISO code (CHF in CH, PLN in PL):
 *    the "narrowSymbol" in `en` (JPY "¥", CNY "¥", MXN "$", PLN "zł", RUB "₽").
 *    The narrow form is what a currency's home market writes; plain `en`
 *    "symbol" would give the internationally disambiguated "CN¥"/"MX$".
 * 3. Without a country: `en` "symbol" ("CA$", "€"), narrowSymbol when that is
 *    the ISO code. Where ICU has no symbol at all the ISO code is the symbol
 *    (CHF → "CHF", KWD → "KWD").
 */
function symbolFor(code: string, countryCode: string | undefined): string {
  if (countryCode !== undefined && COUNTRY_CODE.test(countryCode)) {
    const locale = `en-${countryCode}`;
    const local = currencyPart(locale, code, "symbol");
    if (local.locale === locale && local.text !== code) return local.text;
  } else {
    const international = currencyPart("en", code, "symbol").text;
    if (international !== code) return international;
  }
  return currencyPart("en", code, "narrowSymbol").text;
}

/**
 * Names and symbol of ISO 4217 `code` (e.g. "USD"), optionally as written in
 * `countryCode` (ISO 3166-1 alpha-2, upper case) — see the symbol rule above.
 *
 * `name` is ICU's English display name ("US Dollar"), `name_plural` the name
 * ICU uses when formatting 2 units ("US dollars"), `hex_unicode` see
 * {@link hexUnicode}. `code` is returned upper-cased.
 *
 * Unknown means ICU has no English name for it (`Intl.DisplayNames` with
 * `fallback: "none"` gives undefined): malformed codes, made-up ones ("ABC"),
 * funds/metals codes (USN, XAU, XXX) and, with Deno's ICU data, some recent
 * real ones (XCG, ZWG, VED, SLE). All of these give every field null; never throws.
 */
export function currencyInfo(code: string, countryCode?: string): Currency {
  if (!CURRENCY_CODE.test(code)) return noCurrency();
  const upper = code.toUpperCase();
  try {
    const name = new Intl.DisplayNames(["en"], { type: "currency", fallback: "none" }).of(upper);
    if (name === undefined) return noCurrency();
    const symbol = symbolFor(upper, countryCode);
    return {
      code: upper,
      symbol,
      name,
      name_plural: currencyPart("en", upper, "name").text,
      hex_unicode: hexUnicode(symbol),
    };
  } catch {
    // Intl throws RangeError on codes it rejects; the contract is "no throw".
    return noCurrency();
  }
}
