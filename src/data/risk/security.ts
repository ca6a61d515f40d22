/**
 * The `security` block and the opt-in `risk` group: membership in the installed
 * Tor / VPN / hosting / threat / relay / allow lists and the Anonymous-IP
 * database, and the threat rule. Each flag is three-valued: `null` when no
 * source for it is installed, `false` when one is and says no.
 *
 * Two lists change what the others mean:
 * - `allow` (the operator's own ranges) clears every flag: `isVpn` and `isTor`
 *   false, `isThreat` `low`;
 * - `relay` (a published relay egress, such as Apple's iCloud Private Relay)
 *   wins over the VPN, proxy and hosting answers: a relay keeps the user's
 *   region and is run for ordinary customers, so it is not counted as a VPN
 *   (`isVpn` false) and alone gives `isThreat` `low`. Tor and threat lists still count;
 * - `crawler` (the ranges a crawler's operator publishes, such as Googlebot's)
 *   wins over the VPN, proxy and hosting answers as a relay does: a verified
 *   crawler is not counted as a VPN and alone gives `isThreat` `low`. Tor and
 *   threat lists still count. A user agent claiming a known crawler from
 *   outside its operator's ranges (judged by src/core/lookup/crawler.ts) is a
 *   fake: `isThreat` at least `medium`.
 */

import { formatIpv6, type ParsedIp } from "../../base/ip/parse.ts";
import type { AnonymousIpRecord } from "../mmdb/records.ts";
import type { Risk, RiskMatch, Security, ThreatLevel } from "../../base/types.ts";
import { sharedPart } from "../../base/shared_part.ts";

/** What the loaded sources say about one address; `null` = no source installed. */
export interface RiskSignals {
  tor: boolean | null;
  vpn: boolean | null;
  /** On a threat blocklist. */
  blocklisted: boolean | null;
  /** In a hosting / data-centre range. */
  hosting: boolean | null;
  /** A published relay egress. */
  relay?: boolean | null;
  /** On the operator's allow-list. */
  allowed?: boolean;
  /** In a range a crawler's operator publishes (verified, whatever the user agent says). */
  crawler?: boolean | null;
  /** The request's claim to be a crawler, judged a fake (src/core/lookup/crawler.ts). */
  fakeCrawler?: CrawlerClaim | null;
}

/** A user agent's claim to be a known crawler (read by src/core/ua/crawler_claim.ts). */
export interface CrawlerClaim {
  /** The crawler claimed, as its source names it ("Googlebot"). */
  readonly crawler: string;
  /** Who runs it ("Google"). */
  readonly operator: string;
}

/** What the crawler verdict (src/core/lookup/crawler.ts) says of a request's claim. */
export interface CrawlerVerdict {
  /** The user agent's claim; null when it claims no known crawler. */
  readonly claim: CrawlerClaim | null;
  /** The claim is outside every range its operator publishes. */
  readonly fake: boolean;
  /** The claim cannot be judged: no crawler source of its operator is installed. */
  readonly unjudged: boolean;
}

/** One list's entry covering an address (a geofeed's with its place). */
export interface FeedMatch {
  source: string;
  /** The entry as the list gives it; null for trees compiled before entries were kept. */
  network: string | null;
  country?: string;
  region?: string;
  city?: string;
  postal?: string;
}

/** One installed list kind: its compiled network tree and/or AS numbers. */
export interface FeedMembership {
  /** True when the address is covered by the feed. */
  has(ip: ParsedIp, asn: number | null): boolean;
  /** Every list of the kind covering the address, the most specific entry first. */
  matches(ip: ParsedIp, asn: number | null): FeedMatch[];
}

/** The kinds that speak about security. */
export const RISK_KINDS = ["tor", "vpn", "hosting", "threat", "relay", "allow"] as const;
export type RiskKind = typeof RISK_KINDS[number];

/** What the `risk` group says of a source besides its name. */
export interface SourceFacts {
  dataDate: string | null;
  provider?: string;
  /** Crawler lists: who runs the crawler. */
  operator?: string;
  /** Crawler lists: the crawler's name. */
  crawler?: string;
}

/** The loaded security sources; null where none is installed. */
export type RiskSources = Partial<Record<RiskKind, FeedMembership | null>> & {
  /** The crawler lists: kept out of RISK_KINDS (and the list history), a fact about who runs an address. */
  crawler?: FeedMembership | null;
  anonymousIp: {
    getBytes(address: Uint8Array): AnonymousIpRecord | null;
    getWithPrefixLength?(ip: string): [AnonymousIpRecord | null, number];
  } | null;
  /** The Anonymous-IP database's source name (for `matches`). */
  anonymousIpName?: string;
  /** Each installed source's date and provider, by name. */
  facts?: ReadonlyMap<string, SourceFacts>;
  /** When a list first and last named an entry (src/data/history); absent: no history kept. */
  seen?: (source: string, network: string | null) => { firstSeen: string; lastSeen: string } | null;
};

/** Answers security questions for an address (its AS number helps ASN-based lists). */
export interface RiskSource {
  signals(ip: ParsedIp, asn: number | null): RiskSignals;
  /**
   * The `risk` group: slower (every list is asked for its entries); only when
   * requested. `verdict`: the request's crawler claim as judged (none: no claim).
   */
  explain(ip: ParsedIp, asn: number | null, verdict?: CrawlerVerdict | null): Risk;
}

const UNKNOWN: RiskSignals = Object.freeze({
  tor: null,
  vpn: null,
  blocklisted: null,
  hosting: null,
});

const NO_SOURCE_REASON = "unknown: no security source is installed on this server";

const NO_RISK: Risk = Object.freeze({
  anonymizer: null,
  abuse: null,
  provider: null,
  crawler: null,
  matches: [],
  reason: NO_SOURCE_REASON,
  asOf: null,
});

/** The source used while no security source is installed: every flag unknown. */
export const NO_FEEDS: RiskSource = {
  signals: () => UNKNOWN,
  explain: (_ip, _asn, verdict) =>
    verdict?.claim ? { ...NO_RISK, reason: NO_SOURCE_REASON + unjudged(verdict.claim) } : NO_RISK,
};

/** What `risk.reason` adds for a claim no installed crawler source can judge. */
function unjudged(claim: CrawlerClaim): string {
  return `; the user agent claims ${claim.crawler} (${claim.operator}), which cannot be judged: no crawler source of ${claim.operator} is installed`;
}

/**
 * Combines the lists and the Anonymous-IP database:
 * - `tor`: the Tor lists, or Anonymous-IP `is_tor_exit_node`;
 * - `vpn`: the VPN lists, or Anonymous-IP `is_anonymous_vpn`, `is_public_proxy`, `is_residential_proxy`;
 * - `hosting`: the hosting lists, or Anonymous-IP `is_hosting_provider`;
 * - `blocklisted`: the threat lists; `relay`, `allowed`: the relay and allow lists.
 */
export function createRiskSource(sources: RiskSources): RiskSource {
  const { tor, vpn, hosting, threat, relay, allow, crawler, anonymousIp } = sources;
  if (!tor && !vpn && !hosting && !threat && !relay && !allow && !crawler && !anonymousIp) {
    return NO_FEEDS;
  }
  const anon = anonymousIp !== null;
  const signals = (ip: ParsedIp, asn: number | null): RiskSignals => {
    const a = anonymousIp?.getBytes(ip.bytes) ?? null;
    return {
      tor: either(tor, ip, asn, anon, a?.is_tor_exit_node === true),
      vpn: either(vpn, ip, asn, anon, isProxy(a) || a?.is_anonymous_vpn === true),
      hosting: either(hosting, ip, asn, anon, a?.is_hosting_provider === true),
      blocklisted: threat ? threat.has(ip, asn) : null,
      relay: relay ? relay.has(ip, asn) : null,
      allowed: allow ? allow.has(ip, asn) : false,
      crawler: crawler ? crawler.has(ip, asn) : null,
    };
  };
  return {
    signals,
    explain: (ip, asn, verdict) => {
      const s = signals(ip, asn);
      if (verdict?.fake) s.fakeCrawler = verdict.claim;
      return explain(sources, s, ip, asn, verdict ?? null);
    },
  };
}

function isProxy(a: AnonymousIpRecord | null): boolean {
  return a !== null && (a.is_public_proxy === true || a.is_residential_proxy === true);
}

function either(
  feed: FeedMembership | null | undefined,
  ip: ParsedIp,
  asn: number | null,
  anonLoaded: boolean,
  anonSays: boolean,
): boolean | null {
  if (!feed && !anonLoaded) return null;
  return anonSays || (feed != null && feed.has(ip, asn));
}

/**
 * The documented rule: `high` for a Tor exit or a blocklisted address,
 * `medium` for a fake crawler (a claim from outside its operator's ranges),
 * `low` for a relay or a verified crawler, `medium` for a VPN/anonymous proxy
 * or hosting range, `low` when the installed sources flag none of these (or
 * the address is on the allow-list), `null` when no source is installed.
 */
export function threatLevel(s: RiskSignals): ThreatLevel | null {
  if (s.allowed) return "low";
  if (s.tor || s.blocklisted) return "high";
  if (s.fakeCrawler) return "medium";
  if (!s.relay && !s.crawler && (s.vpn || s.hosting)) return "medium";
  if (
    s.tor === null && s.vpn === null && s.blocklisted === null && s.hosting === null &&
    (s.relay ?? null) === null && (s.crawler ?? null) === null
  ) {
    return null;
  }
  return "low";
}

// The few possible answers, frozen and shared like the other cached parts of a result.
const ANSWERS = new Map<string, Security>();

/** The anonymizer axes as the compatible APIs name them, after the allow-list and relay rules. */
export function anonymizerFlags(s: RiskSignals): {
  vpn: boolean;
  tor: boolean;
  relay: boolean;
  hosting: boolean;
} {
  const listed = (value: boolean | null | undefined) => s.allowed !== true && value === true;
  return {
    vpn: listed(s.vpn) && s.relay !== true && s.crawler !== true,
    tor: listed(s.tor),
    relay: listed(s.relay),
    hosting: listed(s.hosting),
  };
}

/** Builds the `security` object of a result from the signals. */
export function assessSecurity(source: RiskSource, ip: ParsedIp, asn: number | null): Security {
  return securityOf(source.signals(ip, asn));
}

/** The `security` object for signals already read (shared, frozen). */
export function securityOf(s: RiskSignals): Security {
  const key = `${s.tor}${s.vpn}${s.blocklisted}${s.hosting}${s.relay}${s.allowed}${s.crawler}${
    Boolean(s.fakeCrawler)
  }`;
  let answer = ANSWERS.get(key);
  if (!answer) {
    answer = sharedPart({
      isVpn: s.allowed || s.relay || s.crawler ? false : s.vpn,
      isTor: s.allowed ? false : s.tor,
      isThreat: threatLevel(s),
    });
    ANSWERS.set(key, answer);
  }
  return answer;
}

/** The `risk` group: the axes, the provider, the crawler, every match and the reason for `isThreat`. */
function explain(
  sources: RiskSources,
  s: RiskSignals,
  ip: ParsedIp,
  asn: number | null,
  verdict: CrawlerVerdict | null,
): Risk {
  const facts = sources.facts ?? new Map<string, SourceFacts>();
  const byKind = new Map<string, FeedMatch[]>();
  const matches: RiskMatch[] = [];
  const add = (kind: string, found: FeedMatch[]) => {
    byKind.set(kind, found);
    for (const m of found) {
      const seen = sources.seen?.(m.source, m.network);
      matches.push({
        source: m.source,
        kind,
        network: m.network,
        dataDate: facts.get(m.source)?.dataDate ?? null,
        firstSeen: seen?.firstSeen ?? null,
        lastSeen: seen?.lastSeen ?? null,
      });
    }
  };
  for (const kind of RISK_KINDS) add(kind, sources[kind]?.matches(ip, asn) ?? []);
  // Only a verified address has crawler matches to find (the tree walk said so).
  add("crawler", s.crawler ? sources.crawler?.matches(ip, asn) ?? [] : []);
  const anon = anonymousMatch(sources, ip);
  if (anon) {
    const name = sources.anonymousIpName ?? "anonymous-ip";
    matches.push({
      source: name,
      kind: "anonymous-ip",
      network: anon.network,
      dataDate: facts.get(name)?.dataDate ?? null,
      firstSeen: null,
      lastSeen: null,
    });
  }
  const names = (kind: string) => (byKind.get(kind) ?? []).map((m) => m.source);
  const anonSays = (flag: keyof AnonymousIpRecord) => anon?.record[flag] === true;
  const providerOf = (kind: string) =>
    names(kind).map((n) => facts.get(n)?.provider).find((p) => p !== undefined) ?? null;

  const tor = s.tor === true;
  const relay = s.relay === true;
  const crawler = crawlerAnswer(s, names("crawler"), facts, verdict?.claim ?? null);
  const verified = crawler?.verified === true;
  const vpnListed = names("vpn").length > 0 || anonSays("is_anonymous_vpn");
  const proxy = isProxy(anon?.record ?? null);
  const hosting = s.hosting === true;
  const anonymizer = s.allowed
    ? null
    : tor
    ? "tor"
    : relay
    ? "relay"
    : verified
    ? null
    : vpnListed
    ? "vpn"
    : proxy
    ? "proxy"
    : hosting
    ? "hosting"
    : null;
  const provider = relay ? providerOf("relay") : hosting ? providerOf("hosting") : null;
  const level = threatLevel(s);
  const by = (list: string[], fallback: string) => ` (${list.length ? list.join(", ") : fallback})`;
  const anonName = sources.anonymousIpName ?? "anonymous-ip";
  const fake = s.fakeCrawler
    ? `the user agent claims ${s.fakeCrawler.crawler}, but the address is outside every range ${s.fakeCrawler.operator} publishes${
      by(operatorSources(facts, s.fakeCrawler.operator), "crawler")
    }: a fake crawler`
    : null;
  let reason: string;
  if (level === null) reason = NO_SOURCE_REASON;
  else if (s.allowed) reason = `low: on the operator's allow-list${by(names("allow"), "allow")}`;
  else if (level === "high") {
    reason = "high: " + [
      ...(tor ? [`Tor exit${by(names("tor"), anonName)}`] : []),
      ...(s.blocklisted ? [`on a threat list${by(names("threat"), "threat")}`] : []),
      ...(fake ? [fake] : []),
    ].join("; ");
  } else if (fake) reason = `medium: ${fake}`;
  else if (relay) {
    reason = `low: ${provider ?? "relay"} egress${
      by(names("relay"), "relay")
    }: a relay keeps the user's region and is not counted as a VPN`;
  } else if (verified) {
    reason = `low: ${crawler!.name} of ${crawler!.operator}${
      by(names("crawler"), "crawler")
    }: a verified crawler is not counted as hosting or a VPN`;
  } else if (level === "medium") {
    reason = "medium: " +
      (anonymizer === "vpn"
        ? `VPN network${by(names("vpn"), anonName)}`
        : anonymizer === "proxy"
        ? `public or residential proxy (${anonName})`
        : `hosting network${provider ? ` of ${provider}` : ""}${by(names("hosting"), anonName)}`);
  } else reason = "low: none of the installed security sources lists it";
  if (verdict?.unjudged && verdict.claim) reason += unjudged(verdict.claim);
  return {
    anonymizer,
    abuse: s.blocklisted && !s.allowed ? "listed" : null,
    provider,
    crawler,
    matches,
    reason,
    asOf: null,
  };
}

/**
 * `risk.crawler`: the crawler whose published range holds the address (the
 * claimed one when several do), verified; the claimed one when the claim is a
 * fake; else null.
 */
function crawlerAnswer(
  s: RiskSignals,
  sources: readonly string[],
  facts: ReadonlyMap<string, SourceFacts>,
  claim: CrawlerClaim | null,
): Risk["crawler"] {
  if (s.fakeCrawler) {
    return { name: s.fakeCrawler.crawler, operator: s.fakeCrawler.operator, verified: false };
  }
  if (!s.crawler || sources.length === 0) return null;
  const known = sources.map((name) => ({ name, facts: facts.get(name) }));
  const found = known.find((k) => claim !== null && k.facts?.crawler === claim.crawler) ??
    known[0]!;
  return {
    name: found.facts?.crawler ?? found.name,
    operator: found.facts?.operator ?? found.name,
    verified: true,
  };
}

/** The installed crawler lists of an operator, by name. */
function operatorSources(facts: ReadonlyMap<string, SourceFacts>, operator: string): string[] {
  return [...facts].filter(([, f]) => f.operator === operator).map(([name]) => name);
}

/** The Anonymous-IP record and its network, when the database flags the address at all. */
function anonymousMatch(
  sources: RiskSources,
  ip: ParsedIp,
): { record: AnonymousIpRecord; network: string | null } | null {
  const db = sources.anonymousIp;
  const record = db?.getBytes(ip.bytes) ?? null;
  if (!db || !record) return null;
  const flagged = record.is_anonymous || record.is_anonymous_vpn || record.is_hosting_provider ||
    record.is_public_proxy || record.is_residential_proxy || record.is_tor_exit_node;
  if (!flagged) return null;
  const prefix = db.getWithPrefixLength?.(ip.address)[1];
  return { record, network: prefix === undefined ? null : networkOf(ip.bytes, prefix) };
}

/** The CIDR of the `prefix`-bit network holding the address. */
function networkOf(address: Uint8Array, prefix: number): string {
  const bytes = address.map((b, i) => {
    const keep = Math.min(8, Math.max(0, prefix - 8 * i));
    return b & (0xff << (8 - keep));
  });
  return `${bytes.length === 4 ? bytes.join(".") : formatIpv6(bytes)}/${prefix}`;
}
