/**
 * A user agent's claim to be a known crawler: one of its products (`name` in
 * `name/version`, or a bare name in a comment such as `(compatible;
 * Googlebot/2.1; +http://www.google.com/bot.html)`) is a token a crawler
 * source names. Products are matched whole, never as substrings:
 * `NotGooglebot/1.0` claims nothing, and neither does a URL's path
 * (`http://x/Googlebot`) or a version (`1.0`), which follow a `/`.
 *
 * One pass over the string: the runs of token characters (RFC 9110 `tchar`)
 * are found as it goes, and only a run as long as some token is looked up.
 */

import type { CrawlerClaim } from "../../data/risk/security.ts";

/** A crawler a user agent can claim: its name, operator and the product tokens that claim it. */
export interface ClaimableCrawler {
  readonly crawler: string;
  readonly operator: string;
  readonly userAgents: readonly string[];
}

/** Reads the claim of a user agent; null when it claims no known crawler. */
export type ClaimReader = (userAgent: string | null | undefined) => CrawlerClaim | null;

/** Characters of a user agent read for a claim at most (the request's header limits it anyway). */
export const CLAIM_SCAN_LIMIT = 8192;

/**
 * The reader of claims to `crawlers`; where two name one token (case-insensitively),
 * the first wins.
 *
 * @example createClaimReader([{ crawler: "Googlebot", operator: "Google", userAgents: ["Googlebot"] }])(
 *   "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
 * ) // { crawler: "Googlebot", operator: "Google" }
 */
export function createClaimReader(crawlers: readonly ClaimableCrawler[]): ClaimReader {
  const byToken = new Map<string, CrawlerClaim>();
  const lengths = new Uint8Array(65); // token lengths present (tokens are 1-64 characters)
  for (const { crawler, operator, userAgents } of crawlers) {
    const claim: CrawlerClaim = Object.freeze({ crawler, operator });
    for (const token of userAgents) {
      const key = token.toLowerCase();
      if (byToken.has(key) || key.length > 64) continue;
      byToken.set(key, claim);
      lengths[key.length] = 1;
    }
  }
  if (byToken.size === 0) return () => null;
  // The last user agent read and its claim: a client repeats its own.
  let lastUa = "";
  let lastClaim: CrawlerClaim | null = null;
  return (ua) => {
    if (!ua) return null;
    if (ua === lastUa) return lastClaim;
    const end = Math.min(ua.length, CLAIM_SCAN_LIMIT);
    let claim: CrawlerClaim | null = null;
    let start = -1; // where the current run of token characters began
    for (let i = 0; i <= end; i++) {
      const c = i < end ? ua.charCodeAt(i) : 0x20;
      if (c < 128 && TCHAR[c] === 1) {
        if (start === -1) start = i;
        continue;
      }
      if (start === -1) continue;
      const length = i - start;
      // A run after "/" is a version or a path segment, not a product.
      if (
        length <= 64 && lengths[length] === 1 && (start === 0 || ua.charCodeAt(start - 1) !== SLASH)
      ) {
        const found = byToken.get(ua.slice(start, i).toLowerCase());
        if (found !== undefined) {
          claim = found;
          break;
        }
      }
      start = -1;
    }
    lastUa = ua;
    lastClaim = claim;
    return claim;
  };
}

const SLASH = 0x2f;

/** RFC 9110 `tchar`: the characters of a product token, by ASCII code. */
const TCHAR = (() => {
  const table = new Uint8Array(128);
  const chars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
})();

/** What keys an answer that depends on a user agent only through its claim. */
export function claimKey(claim: CrawlerClaim | null): string {
  return claim === null ? "" : `${claim.operator}\t${claim.crawler}`;
}
