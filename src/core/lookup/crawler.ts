/**
 * The crawler verdict of a request (docs/api.md, "Crawlers"): the claim its
 * user agent makes (src/core/ua/crawler_claim.ts), judged against the crawler
 * ranges installed. An address in a published range is a verified crawler
 * whatever it claims (the risk source says so from the address alone); a
 * claim from outside every published range is a fake, when a crawler source
 * of the claimed operator is installed; otherwise the claim cannot be judged.
 *
 * The claims known are the installed crawler lists' tokens, then those of the
 * default sources file (so a claim to a crawler whose list is not installed
 * is named as one that cannot be judged, not passed over).
 */

import sourcesJson from "../../../data/sources.json" with { type: "json" };
import type { CrawlerClaim, CrawlerVerdict, RiskSignals } from "../../data/risk/security.ts";
import type { InstalledCrawler } from "../../data/sources/data_set.ts";
import { type ClaimableCrawler, createClaimReader } from "../ua/crawler_claim.ts";

export interface CrawlerJudge {
  /** Whether a crawler list is installed (else every claim is unjudged). */
  readonly installed: boolean;
  /** The claim of a user agent; null when it claims no known crawler. */
  claimOf(userAgent: string | null | undefined): CrawlerClaim | null;
  /** The verdict on a claim at an address (its signals); null for no claim. */
  verdict(signals: RiskSignals, claim: CrawlerClaim | null): CrawlerVerdict | null;
}

/** The judge over a data set's installed crawler lists. */
export function createCrawlerJudge(installed: readonly InstalledCrawler[]): CrawlerJudge {
  const operators = new Set(installed.map((c) => c.operator));
  const claimOf = createClaimReader([...installed, ...defaultCrawlers()]);
  return {
    installed: installed.length > 0,
    claimOf,
    verdict(signals, claim) {
      if (claim === null) return null;
      // No crawler list answered for this address (none installed, or an `at` answer).
      if (signals.crawler == null || !operators.has(claim.operator)) {
        return { claim, fake: false, unjudged: true };
      }
      return { claim, fake: signals.crawler === false, unjudged: false };
    },
  };
}

let defaults: readonly ClaimableCrawler[] | null = null;

/** The crawler entries of the default sources file (data/sources.json). */
function defaultCrawlers(): readonly ClaimableCrawler[] {
  defaults ??= (sourcesJson.sources as readonly Record<string, unknown>[]).flatMap((s) =>
    s.kind === "crawler" && typeof s.crawler === "string" && typeof s.operator === "string" &&
      Array.isArray(s.userAgents)
      ? [{ crawler: s.crawler, operator: s.operator, userAgents: s.userAgents as string[] }]
      : []
  );
  return defaults;
}
