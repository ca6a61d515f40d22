/** Who is calling: the TCP peer, or the forwarded client when the peer is a trusted proxy. */

import { type Cidr, cidrContains, parseCidr } from "../ip/cidr.ts";
import { type ParsedIp, parseIp } from "../ip/parse.ts";

export type ClientAddressResolver = (peer: string, headers: Headers) => string;

/**
 * Builds the resolver once (bad CIDRs fail at start-up). Forwarding headers
 * are believed only from trusted peers: walking `Forwarded` (else
 * `X-Forwarded-For`) from the right, the first address that is not itself a
 * trusted proxy is the client. An unparsable hop ends the walk at the last
 * trusted hop, because anything to its left may be forged.
 */
export function createClientAddressResolver(
  trustedProxies: readonly string[],
): ClientAddressResolver {
  const trusted: Cidr[] = trustedProxies.map((text) => {
    try {
      return parseCidr(text);
    } catch (error) {
      throw new Error(
        `Invalid IPINTEL_TRUSTED_PROXIES entry "${text}": ${(error as Error).message}`,
      );
    }
  });
  const isTrusted = (ip: ParsedIp) => trusted.some((cidr) => cidrContains(cidr, ip));

  return (peer, headers) => {
    const peerIp = tryParse(peer);
    if (!peerIp || trusted.length === 0 || !isTrusted(peerIp)) return peerIp?.address ?? peer;
    const hops = forwardedHops(headers);
    let client = peerIp;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = tryParse(hops[i]!);
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return client.address;
  };
}

/** The `for=` values of `Forwarded` (RFC 7239), else the `X-Forwarded-For` list. */
function forwardedHops(headers: Headers): string[] {
  const forwarded = headers.get("forwarded");
  if (forwarded) {
    const hops: string[] = [];
    for (const element of forwarded.split(",")) {
      const match = /(?:^|;)\s*for\s*=\s*("[^"]*"|[^;,\s]*)/i.exec(element);
      hops.push(match ? stripNodePort(match[1]!.replace(/^"|"$/g, "")) : "");
    }
    return hops;
  }
  const xff = headers.get("x-forwarded-for");
  return xff ? xff.split(",").map((s) => s.trim()) : [];
}

/** `[2001:db8::1]:4711` → `2001:db8::1`; `192.0.2.1:80` → `192.0.2.1`. */
function stripNodePort(node: string): string {
  if (node.startsWith("[")) return node.slice(1, node.indexOf("]"));
  const colon = node.indexOf(":");
  return colon !== -1 && node.indexOf(":", colon + 1) === -1 ? node.slice(0, colon) : node;
}

function tryParse(text: string): ParsedIp | null {
  try {
    return parseIp(text);
  } catch {
    return null; // an unparsable hop is simply not an address; the caller decides
  }
}
