/** An address range as the CIDRs that cover it exactly (how a range entry is indexed). */

import { formatIpv6, parseIp } from "../../base/ip/parse.ts";

/**
 * `[address, prefix length]` of each CIDR covering `first`..`last` exactly,
 * in order. Throws when the ends are not addresses of one family in order.
 *
 * @example rangeCidrs("10.0.0.1", "10.0.0.2") // [["10.0.0.1", 32], ["10.0.0.2", 32]]
 */
export function rangeCidrs(first: string, last: string): [string, number][] {
  const a = parseIp(first);
  const aBits = a.bytes.length * 8;
  let lo = toBigInt(a.bytes);
  const b = parseIp(last);
  const hi = toBigInt(b.bytes);
  if (a.version !== b.version || lo > hi) {
    throw new Error(`${first}-${last} is not a range of one family in order`);
  }
  const out: [string, number][] = [];
  while (lo <= hi) {
    // The largest block starting at `lo` that is aligned and ends inside the range.
    let size = 0;
    while (
      size < aBits && (lo & ((1n << BigInt(size + 1)) - 1n)) === 0n &&
      lo + (1n << BigInt(size + 1)) - 1n <= hi
    ) size++;
    out.push([toText(lo, aBits), aBits - size]);
    lo += 1n << BigInt(size);
  }
  return out;
}

function toBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = 0; i < bytes.length; i++) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

function toText(value: bigint, bits: number): string {
  const bytes = new Uint8Array(bits / 8);
  for (let i = bytes.length - 1; i >= 0; i--, value >>= 8n) bytes[i] = Number(value & 0xffn);
  return bits === 32 ? bytes.join(".") : formatIpv6(bytes);
}
