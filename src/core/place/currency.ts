/**
 * Currency names and symbols from ICU (through `Intl`), no data files.
 *
 * @module
 */

import type { Currency } from "../../base/types.ts";

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
 * Currencies in use that Deno's ICU does not know yet (`Intl.DisplayNames` has no
 * name for them), with their English names from ISO 4217 / CLDR and the symbol
 * their central bank prints. Checked against countries-list's codes by a test.
 */
const NEWER_THAN_ICU: ReadonlyMap<string, Omit<Currency, "code" | "hex_unicode">> = new Map([
  // Curaçao and Sint Maarten, since 31 March 2025 (replacing ANG).
  ["XCG", { symbol: "Cg", name: "Caribbean Guilder", name_plural: "Caribbean guilders" }],
  // Sierra Leone's redenominated leone, since 2022.
  ["SLE", { symbol: "Le", name: "Sierra Leonean Leone", name_plural: "Sierra Leonean leones" }],
  // Zimbabwe Gold, since 2024.
  ["ZWG", { symbol: "ZiG", name: "Zimbabwean Gold", name_plural: "Zimbabwean gold" }],
  // Venezuela's digital bolívar, since 2021 (countries-list gives VES, which ICU knows).
  ["VED", { symbol: null, name: "Bolívar Soberano", name_plural: "bolívars soberanos" }],
]);

/** ICU's names of `code` in `lang`, or undefined when ICU has none in that language. */
function namesIn(lang: string, code: string): { name: string; name_plural: string } | undefined {
  const name = new Intl.DisplayNames([lang], { type: "currency", fallback: "none" }).of(code);
  if (name === undefined) return undefined;
  return { name, name_plural: currencyPart(lang, code, "name").text };
}

/**
 * Names and symbol of ISO 4217 `code` (e.g. "USD"), optionally as written in
 * `countryCode` (ISO 3166-1 alpha-2, upper case) — see the symbol rule above —
 * with names in `lang` (a BCP 47 tag; English when omitted).
 *
 * `name` is ICU's display name ("US Dollar"; "US-Dollar" in `de`), `name_plural`
 * the name ICU uses when formatting 2 units ("US dollars"), `hex_unicode` see
 * {@link hexUnicode}. `code` is returned upper-cased. Names fall back to English
 * when ICU has none in `lang`.
 *
 * A real currency newer than Deno's ICU (XCG, SLE, ZWG, VED) keeps its code and
 * takes names and symbol from the small table above (English only; a null symbol
 * where the table has none). Unknown means neither ICU nor that table knows the
 * code: malformed codes, made-up ones ("ABC"), funds/metals codes (USN, XAU, XXX).
 * These give every field null; never throws.
 */
export function currencyInfo(code: string, countryCode?: string, lang = "en"): Currency {
  if (!CURRENCY_CODE.test(code)) return noCurrency();
  const upper = code.toUpperCase();
  try {
    const english = namesIn("en", upper);
    if (english === undefined) {
      const known = NEWER_THAN_ICU.get(upper);
      if (known === undefined) return noCurrency();
      const hex = known.symbol === null ? null : hexUnicode(known.symbol);
      return { code: upper, ...known, hex_unicode: hex };
    }
    const names = (lang === "en" ? undefined : namesIn(lang, upper)) ?? english;
    const symbol = symbolFor(upper, countryCode);
    return { code: upper, symbol, ...names, hex_unicode: hexUnicode(symbol) };
  } catch {
    // Intl throws RangeError on codes or languages it rejects; the contract is "no throw".
    return noCurrency();
  }
}
