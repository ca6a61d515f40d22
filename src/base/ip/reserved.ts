/**
 * Names of special-purpose address ranges, for the "not found" message
 * (docs/decisions.md, "Addresses": no special casing, but the 404 says which range).
 *
 * Sources: the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890
 * and successors) and the IANA IPv6 Address Space registry. Ranges that are
 * globally reachable ordinary anycast (AS112, AMT, PCP/TURN anycast) are not
 * named on their own; the IPv6 ones fall under "IETF protocol assignments".
 * Everything outside 2000::/3 that has no more specific entry is "reserved"
 * (IANA: "Reserved by IETF").
 *
 * The tables are checked by longest prefix: entries are sorted by prefix
 * length, longest first, so the first match wins (e.g. 0.0.0.0/32
 * "unspecified" before 0.0.0.0/8 "this network").
 *
 * @module
 */

import { type ParsedIp, parseIp } from "./parse.ts";

type Entry = readonly [network: string, prefixLength: number, name: string];

/** IPv4 special-purpose ranges. */
export const IPV4_RESERVED_RANGES: readonly Entry[] = [
  ["0.0.0.0", 8, "this network"], // RFC 791
  ["0.0.0.0", 32, "unspecified"],
  ["10.0.0.0", 8, "private network"], // RFC 1918
  ["100.64.0.0", 10, "carrier-grade NAT"], // RFC 6598 shared address space
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private network"],
  ["192.0.0.0", 24, "IETF protocol assignments"], // RFC 6890
  ["192.0.2.0", 24, "documentation"], // TEST-NET-1
  ["192.88.99.0", 24, "6to4 relay anycast"], // RFC 7526, deprecated
  ["192.168.0.0", 16, "private network"],
  ["198.18.0.0", 15, "benchmarking"], // RFC 2544
  ["198.51.100.0", 24, "documentation"], // TEST-NET-2
  ["203.0.113.0", 24, "documentation"], // TEST-NET-3
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"], // RFC 1112 "future use"
  ["255.255.255.255", 32, "broadcast"],
];

/** IPv6 special-purpose ranges. */
export const IPV6_RESERVED_RANGES: readonly Entry[] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  // parseIp reports these as IPv4; kept for callers that build bytes themselves.
  ["::ffff:0:0", 96, "IPv4-mapped"],
  ["64:ff9b::", 96, "IPv4/IPv6 translation"], // RFC 6052 well-known prefix
  ["64:ff9b:1::", 48, "IPv4/IPv6 translation"], // RFC 8215 local-use
  ["100::", 64, "discard-only"], // RFC 6666
  ["2001::", 23, "IETF protocol assignments"], // RFC 2928
  ["2001::", 32, "Teredo"], // RFC 4380: tunnel, the address says nothing of the host
  ["2001:2::", 48, "benchmarking"], // RFC 5180
  ["2001:db8::", 32, "documentation"], // RFC 3849
  ["2002::", 16, "6to4"], // RFC 3056
  ["3fff::", 20, "documentation"], // RFC 9637
  ["5f00::", 16, "segment routing (SRv6)"], // RFC 9602
  ["fc00::", 7, "unique local"], // RFC 4193
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local (deprecated)"], // RFC 3879
  ["ff00::", 8, "multicast"],
  // Outside global unicast 2000::/3 (IANA IPv6 Address Space).
  ["::", 3, "reserved"],
  ["4000::", 2, "reserved"],
  ["8000::", 1, "reserved"],
];

// Compiled tables: per entry, network words then mask words (1 word for IPv4,
// 4 for IPv6), plus the names, all in longest-prefix-first order.
interface Compiled {
  words: Uint32Array;
  names: string[];
}

function compile(entries: readonly Entry[], version: 4 | 6): Compiled {
  const nWords = version === 4 ? 1 : 4;
  const sorted = [...entries].sort((a, b) => b[1] - a[1]);
  const words = new Uint32Array(sorted.length * nWords * 2);
  const names: string[] = [];
  sorted.forEach(([network, prefix, name], e) => {
    const ip = parseIp(network);
    // "::ffff:0:0" parses as IPv4 0.0.0.0, so rebuild the 16 bytes for it.
    const bytes = version === 6 && ip.version === 4
      ? Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...ip.bytes)
      : ip.bytes;
    if (bytes.length !== nWords * 4) throw new Error(`bad table entry ${network}`);
    for (let w = 0; w < nWords; w++) {
      const bits = Math.max(0, Math.min(32, prefix - w * 32));
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
      const net = wordAt(bytes, w * 4);
      if ((net & mask) >>> 0 !== net) throw new Error(`host bits set in ${network}/${prefix}`);
      words[e * nWords * 2 + w] = net;
      words[e * nWords * 2 + nWords + w] = mask;
    }
    names.push(name);
  });
  return { words, names };
}

/** Big-endian 32-bit word of `b[i..i+4)`. */
function wordAt(b: Uint8Array, i: number): number {
  return (((b[i] ?? 0) << 24) | ((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) |
    (b[i + 3] ?? 0)) >>> 0;
}

const V4 = compile(IPV4_RESERVED_RANGES, 4);
const V6 = compile(IPV6_RESERVED_RANGES, 6);

/**
 * The name of the special-purpose range holding `ip` ("private network",
 * "loopback", "documentation", ...), or null for an ordinary public address.
 * Allocation-free: a linear scan of a small packed table.
 */
export function reservedRangeName(ip: ParsedIp): string | null {
  const b = ip.bytes;
  if (ip.version === 4) {
    const a = wordAt(b, 0);
    const t = V4.words;
    for (let e = 0; e < V4.names.length; e++) {
      if (((a & (t[e * 2 + 1] ?? 0)) >>> 0) === t[e * 2]) return V4.names[e] ?? null;
    }
    return null;
  }
  const w0 = wordAt(b, 0), w1 = wordAt(b, 4), w2 = wordAt(b, 8), w3 = wordAt(b, 12);
  const t = V6.words;
  for (let e = 0; e < V6.names.length; e++) {
    const o = e * 8;
    if (
      ((w0 & (t[o + 4] ?? 0)) >>> 0) === t[o] &&
      ((w1 & (t[o + 5] ?? 0)) >>> 0) === t[o + 1] &&
      ((w2 & (t[o + 6] ?? 0)) >>> 0) === t[o + 2] &&
      ((w3 & (t[o + 7] ?? 0)) >>> 0) === t[o + 3]
    ) {
      return V6.names[e] ?? null;
    }
  }
  return null;
}
