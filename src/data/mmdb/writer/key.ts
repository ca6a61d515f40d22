/**
 * Address text → the writer's 128-bit tree key (4 big-endian 32-bit words). The text
 * is read by the service's own parser (src/base/ip/parse.ts), so the writer accepts exactly
 * the addresses the API does. IPv4 a.b.c.d becomes ::a.b.c.d (the IPv4 subtree lives
 * at ::/96); IPv6 text stays IPv6, `::ffff:a.b.c.d` included (the writer maps it).
 */

import { parsePrefixLength } from "../../../base/ip/cidr.ts";
import { parseIp } from "../../../base/ip/parse.ts";

/** Writes the key of `text` into `out`; true when the text is IPv4. Throws naming the text. */
export function parseAddressKey(text: string, out: Uint32Array): boolean {
  if (typeof text !== "string") throw new Error("address is not a string");
  const ip = parseIp(text);
  const b = ip.bytes;
  if (ip.version === 4) {
    const ipv6Text = text.includes(":");
    out[0] = 0;
    out[1] = 0;
    out[2] = ipv6Text ? 0xffff : 0;
    out[3] = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
    return !ipv6Text;
  }
  for (let i = 0; i < 4; i++) {
    out[i] = ((b[4 * i]! << 24) | (b[4 * i + 1]! << 16) | (b[4 * i + 2]! << 8) | b[4 * i + 3]!) >>>
      0;
  }
  return false;
}

/**
 * Parses "addr/len" (or a bare address = one host) into its first and last key.
 * Host bits set below the prefix are an error, not silently cleared.
 */
export function parseNetworkKeys(text: string, first: Uint32Array, last: Uint32Array): void {
  if (typeof text !== "string") throw new Error("network is not a string");
  const slash = text.indexOf("/");
  const v4 = parseAddressKey(slash === -1 ? text : text.slice(0, slash), first);
  const max = v4 ? 32 : 128;
  const len = slash === -1 ? max : parsePrefixLength(text.slice(slash + 1), max);
  if (len === null) {
    throw new Error(`bad prefix length "${text.slice(slash + 1)}" (0 to ${max})`);
  }
  const bits = v4 ? len + 96 : len;
  for (let i = 0; i < 4; i++) {
    const keep = Math.min(32, Math.max(0, bits - 32 * i));
    const host = keep === 32 ? 0 : (0xffffffff >>> keep) >>> 0;
    if ((first[i]! & host) !== 0) {
      throw new Error(`host bits set below /${len} (the network address is needed)`);
    }
    last[i] = (first[i]! | host) >>> 0;
  }
}

/** Compares two keys: negative, 0 or positive. */
export function compareKeys(a: Uint32Array, b: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return 0;
}
