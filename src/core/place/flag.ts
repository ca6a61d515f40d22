/**
 * Flag emoji for a country code, built from Unicode regional-indicator symbols.
 *
 * @module
 */

import type { Flag } from "../../base/types.ts";

/** U+1F1E6 REGIONAL INDICATOR SYMBOL LETTER A; "B" is the next code point, etc. */
const REGIONAL_INDICATOR_A = 0x1f1e6;

/** Two ASCII letters, either case. */
const TWO_LETTERS = /^[A-Za-z]{2}$/;

/**
 * The flag of an ISO 3166-1 alpha-2 code: `flag_Icon` is the emoji ("🇺🇸"),
 * `flag_unicode` its code points ("U+1F1FA U+1F1F8", upper-case hex).
 *
 * Any two ASCII letters give a pair of regional indicators (lower case is
 * upper-cased); whether a platform draws a flag for the pair is its business.
 * Null or anything else gives both fields null.
 */
export function flagFor(countryCode: string | null): Flag {
  if (countryCode === null || !TWO_LETTERS.test(countryCode)) {
    return { flag_Icon: null, flag_unicode: null };
  }
  const points = [...countryCode.toUpperCase()].map((letter) =>
    REGIONAL_INDICATOR_A + letter.charCodeAt(0) - 0x41
  );
  return {
    flag_Icon: String.fromCodePoint(...points),
    flag_unicode: points.map((p) => `U+${p.toString(16).toUpperCase()}`).join(" "),
  };
}
