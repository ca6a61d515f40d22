import assert from "node:assert/strict";
import { type ParsedIp, parseIp } from "../../../src/base/ip/parse.ts";
import {
  anonymizerFlags,
  assessSecurity,
  createRiskSource,
  type FeedMembership,
  NO_FEEDS,
  type RiskSignals,
  threatLevel,
} from "../../../src/data/risk/security.ts";

Deno.test("threatLevel() follows the documented rule, null only when nothing is installed", () => {
  const cases: [Partial<RiskSignals>, string | null][] = [
    [{}, null],
    [{ tor: false }, "low"],
    [{ tor: true }, "high"],
    [{ blocklisted: true, vpn: true }, "high"],
    [{ vpn: true, tor: false }, "medium"],
    [{ hosting: true }, "medium"],
    [{ vpn: false, hosting: false, blocklisted: false, tor: false }, "low"],
    [{ relay: false }, "low"],
    [{ relay: true, vpn: true, hosting: true }, "low"], // a relay is not counted as a VPN
    [{ relay: true, blocklisted: true }, "high"],
    [{ allowed: true, tor: true, blocklisted: true }, "low"], // the operator's own ranges
  ];
  for (const [given, expected] of cases) {
    const signals = { tor: null, vpn: null, blocklisted: null, hosting: null, ...given };
    assert.equal(threatLevel(signals), expected, JSON.stringify(given));
  }
});

/** A feed holding the listed addresses and AS numbers. */
const feed = (ips: string[], asns: number[] = [], name = "list"): FeedMembership => {
  const has = (ip: ParsedIp, asn: number | null) =>
    ips.includes(ip.address) || (asn !== null && asns.includes(asn));
  return {
    has,
    matches: (ip, asn) => has(ip, asn) ? [{ source: name, network: ip.address }] : [],
  };
};

Deno.test("createRiskSource(): a flag is null without its source, false when its source says no", () => {
  const risk = createRiskSource({
    tor: feed(["1.1.1.1"]),
    vpn: null,
    hosting: feed([], [16509]),
    threat: null,
    anonymousIp: null,
  });
  assert.deepEqual(assessSecurity(risk, parseIp("1.1.1.1"), null), {
    isVpn: null,
    isTor: true,
    isThreat: "high",
  });
  assert.deepEqual(assessSecurity(risk, parseIp("2.2.2.2"), 16509), {
    isVpn: null,
    isTor: false,
    isThreat: "medium", // hosting by AS number
  });
  assert.deepEqual(assessSecurity(risk, parseIp("2.2.2.2"), 3320), {
    isVpn: null,
    isTor: false,
    isThreat: "low",
  });
});

Deno.test("createRiskSource(): the Anonymous-IP database alone makes isVpn and isTor known", () => {
  const records: Record<string, object> = { "5.5.5.5": { is_public_proxy: true } };
  const risk = createRiskSource({
    tor: null,
    vpn: null,
    hosting: null,
    threat: null,
    anonymousIp: {
      getBytes: (bytes) => (records[[...bytes].join(".")] ?? null) as never,
    },
  });
  assert.deepEqual(assessSecurity(risk, parseIp("5.5.5.5"), null), {
    isVpn: true,
    isTor: false,
    isThreat: "medium",
  });
  assert.deepEqual(assessSecurity(risk, parseIp("6.6.6.6"), null), {
    isVpn: false,
    isTor: false,
    isThreat: "low",
  });
});

Deno.test("explain(): an Anonymous-IP proxy record is the proxy axis, its network in matches", () => {
  const risk = createRiskSource({
    anonymousIp: {
      getBytes: (bytes) => bytes[0] === 5 ? { is_anonymous: true, is_public_proxy: true } : null,
      getWithPrefixLength: () => [{ is_public_proxy: true }, 22],
    },
    anonymousIpName: "IPINTEL_ANONYMOUS_IP_DB",
    facts: new Map([["IPINTEL_ANONYMOUS_IP_DB", { dataDate: "2026-11-01T00:00:00.000Z" }]]),
    hosting: feed(["5.5.5.5"], [], "dc"),
  });
  assert.deepEqual(risk.explain(parseIp("5.5.5.5"), null), {
    anonymizer: "proxy",
    abuse: null,
    provider: null,
    crawler: null,
    matches: [
      {
        source: "dc",
        kind: "hosting",
        network: "5.5.5.5",
        dataDate: null,
        firstSeen: null,
        lastSeen: null,
      },
      {
        source: "IPINTEL_ANONYMOUS_IP_DB",
        kind: "anonymous-ip",
        network: "5.5.4.0/22",
        dataDate: "2026-11-01T00:00:00.000Z",
        firstSeen: null,
        lastSeen: null,
      },
    ],
    reason: "medium: public or residential proxy (IPINTEL_ANONYMOUS_IP_DB)",
    asOf: null,
  });
  assert.equal(
    risk.explain(parseIp("6.6.6.6"), null).reason,
    "low: none of the installed security sources lists it",
  );
  assert.equal(
    NO_FEEDS.explain(parseIp("6.6.6.6"), null).reason,
    "unknown: no security source is installed on this server",
  );
});

Deno.test("anonymizerFlags: a relay is not a VPN, and the allow-list clears every axis for the compatible APIs", () => {
  const relay = { tor: false, vpn: true, blocklisted: false, hosting: true, relay: true };
  assert.deepEqual(anonymizerFlags(relay), { vpn: false, tor: false, relay: true, hosting: true });
  assert.deepEqual(anonymizerFlags({ ...relay, tor: true, allowed: true }), {
    vpn: false,
    tor: false,
    relay: false,
    hosting: false,
  });
  const unknown = { tor: null, vpn: null, blocklisted: null, hosting: null };
  assert.deepEqual(anonymizerFlags(unknown), {
    vpn: false,
    tor: false,
    relay: false,
    hosting: false,
  });
});
