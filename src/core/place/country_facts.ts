/**
 * Per-country enrichment (capital, dial code, currency, flag), memoised.
 *
 * @module
 */

import type { Currency, Flag } from "../../base/types.ts";
import { countryFacts } from "./country.ts";
import { currencyInfo } from "./currency.ts";
import { flagFor } from "./flag.ts";

/** Everything a lookup result takes from the country code alone. */
export interface CountryEnrichment {
  capital: string | null;
  dial_code: string | null;
  /** Used where the City record lacks them (an address known only by its registered country). */
  continent: string | null;
  continentCode: string | null;
  /** The country's time zone when it has exactly one, else null. */
  timeZone: string | null;
  currency: Currency;
  flag: Flag;
}

/**
 * A `(countryCode, lang) => CountryEnrichment` function, as returned by
 * createCountryEnricher; `lang` (default "en") picks the language of currency names.
 */
export type CountryEnricher = (countryCode: string | null, lang?: string) => CountryEnrichment;

/** The only accepted shape; anything else is answered without touching the memo. */
const COUNTRY_CODE = /^[A-Z]{2}$/;

/** Every field null: no country, or not an upper-case alpha-2 code. */
function emptyEnrichment(): CountryEnrichment {
  return {
    capital: null,
    dial_code: null,
    continent: null,
    continentCode: null,
    timeZone: null,
    currency: { code: null, symbol: null, name: null, name_plural: null, hex_unicode: null },
    flag: { flag_Icon: null, flag_unicode: null },
  };
}

/** Computes the enrichment of a well-formed code (the memo's miss path). */
function enrich(countryCode: string, lang: string): CountryEnrichment {
  const facts = countryFacts(countryCode);
  const currencyCode = facts?.currencyCode ?? null;
  const currency = currencyCode === null
    ? emptyEnrichment().currency
    : currencyInfo(currencyCode, countryCode, lang);
  return {
    capital: facts?.capital ?? null,
    dial_code: facts?.dial_code ?? null,
    continent: facts?.continent ?? null,
    continentCode: facts?.continentCode ?? null,
    timeZone: facts?.timeZone ?? null,
    currency,
    // Shape-valid codes the data set lacks (e.g. "EU") still get their indicator pair.
    flag: flagFor(countryCode),
  };
}

/**
 * Returns a memoised `(countryCode, lang) => { capital, dial_code, currency, flag }`.
 *
 * The currency is the country's first one, with the symbol as written there and
 * names in `lang` (see currencyInfo). Only `[A-Z]{2}` codes are looked up and
 * stored, so the memo holds at most 676 entries per language (about 250 real
 * codes); callers pass only the few languages they serve. Null, lower case or
 * junk get every field null. Each call returns fresh objects, so callers may
 * mutate the result without corrupting the memo.
 */
export function createCountryEnricher(): CountryEnricher {
  const memo = new Map<string, CountryEnrichment>();
  return (countryCode, lang = "en") => {
    if (countryCode === null || !COUNTRY_CODE.test(countryCode)) return emptyEnrichment();
    const key = `${countryCode} ${lang}`;
    let known = memo.get(key);
    if (known === undefined) {
      known = enrich(countryCode, lang);
      memo.set(key, known);
    }
    return { ...known, currency: { ...known.currency }, flag: { ...known.flag } };
  };
}
