/** CIDR blocks: parsing and membership, for configuration such as trusted proxies. */

import { formatIpv6, type ParsedIp, parseIp } from "./parse.ts";

export interface Cidr {
  version: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

/**
 * Parses `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a single host).
 * Throws naming the text when it is not a valid block.
 */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf("/");
  const ip = parseIp(slash === -1 ? text : text.slice(0, slash));
  const max = ip.version === 4 ? 32 : 128;
  const prefix = slash === -1 ? max : parsePrefixLength(text.slice(slash + 1), max);
  if (prefix === null) {
    throw new Error(`Invalid CIDR "${text}": prefix length must be 0 to ${max}`);
  }
  return { version: ip.version, bytes: ip.bytes, prefix };
}

/** The prefix length written in `text`: decimal 0 to `max` without leading zeros, else null. */
export function parsePrefixLength(text: string, max: number): number | null {
  if (!/^(?:0|[1-9][0-9]{0,2})$/.test(text)) return null;
  const prefix = Number(text);
  return prefix <= max ? prefix : null;
}

/** True when the address lies inside the block (same family only). */
export function cidrContains(cidr: Cidr, ip: ParsedIp): boolean {
  if (cidr.version !== ip.version) return false;
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (cidr.bytes[i] !== ip.bytes[i]) return false;
  const rest = cidr.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((cidr.bytes[whole]! ^ ip.bytes[whole]!) & mask) === 0;
}

/**
 * The block of `prefix` bits holding the address, as text.
 *
 * @example formatNetwork(parseIp("8.8.8.8"), 24) // "8.8.8.0/24"
 */
export function formatNetwork(ip: ParsedIp, prefix: number): string {
  const bytes = new Uint8Array(ip.bytes.length);
  for (let bit = 0; bit < prefix; bit += 8) {
    const keep = Math.min(8, prefix - bit);
    bytes[bit >> 3] = ip.bytes[bit >> 3]! & ((0xff << (8 - keep)) & 0xff);
  }
  const text = ip.version === 4 ? bytes.join(".") : formatIpv6(bytes);
  return `${text}/${prefix}`;
}
