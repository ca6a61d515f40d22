/**
 * Deterministic random public addresses for the benchmarks.
 *
 * About 80% IPv4 drawn uniformly from the whole space, 20% IPv6 drawn from
 * prefixes that are really allocated and routed (so a database knows most of
 * them); anything `reservedRangeName` names (private, documentation,
 * multicast, 6to4, Teredo...) is skipped and drawn again.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";
import { parseIp } from "../src/base/ip/parse.ts";
import { readManifest } from "../src/data/sources/manifest.ts";
import { reservedRangeName } from "../src/base/ip/reserved.ts";
import { seededRandom } from "../tests/_random.ts";

/** Share of IPv4 addresses in the mix. */
export const IPV4_SHARE = 0.8;

/**
 * IPv6 prefixes drawn from, as [first 16-bit group, mask of the group's fixed
 * bits, second group or -1 for random, weight]. Regional registry /12 blocks
 * plus a few large well-known /32s (Google, Comcast, Deutsche Telekom).
 */
const IPV6_PREFIXES: readonly (readonly [number, number, number, number])[] = [
  [0x2001, 0xffff, 0x4860, 1], // 2001:4860::/32 Google
  [0x2601, 0xffff, -1, 2], // 2601::/16 Comcast (within ARIN's 2600::/12)
  [0x2003, 0xffff, -1, 1], // 2003::/16 Deutsche Telekom (RIPE)
  [0x2a00, 0xfff0, -1, 4], // 2a00::/12 RIPE NCC
  [0x2600, 0xfff0, -1, 3], // 2600::/12 ARIN
  [0x2400, 0xfff0, -1, 3], // 2400::/12 APNIC
  [0x2800, 0xfff0, -1, 1], // 2800::/12 LACNIC
  [0x2c00, 0xfff0, -1, 1], // 2c00::/12 AFRINIC
];
const IPV6_WEIGHT_TOTAL = IPV6_PREFIXES.reduce((sum, p) => sum + p[3], 0);

function randomIpv4(next: () => number): string {
  const v = next();
  return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

function randomIpv6(next: () => number): string {
  let pick = (next() / 2 ** 32) * IPV6_WEIGHT_TOTAL;
  let prefix = IPV6_PREFIXES[0]!;
  for (const p of IPV6_PREFIXES) {
    prefix = p;
    pick -= p[3];
    if (pick < 0) break;
  }
  const [first, mask, second] = prefix;
  const groups: number[] = [];
  for (let g = 0; g < 8; g += 2) {
    const v = next();
    groups.push(v >>> 16, v & 0xffff);
  }
  groups[0] = (first & mask) | ((groups[0] ?? 0) & ~mask & 0xffff);
  if (second >= 0) groups[1] = second;
  // parseIp canonicalises (RFC 5952), so the text matches what a server echoes.
  return parseIp(groups.map((g) => g.toString(16)).join(":")).address;
}

/** Options of {@link randomPublicAddresses}. */
export interface AddressOptions {
  /**
   * Keeps an address only when this returns true (e.g. "the City database
   * knows it"); a rejected address is replaced by another of the same family,
   * so the IPv4/IPv6 mix is kept. Gives up after `count * 50` draws in all.
   */
  keep?: (ip: string) => boolean;
}

/**
 * `count` distinct public addresses, the same for the same `seed` (and
 * `keep`): about {@link IPV4_SHARE} IPv4, the rest IPv6 from allocated
 * prefixes, none in a range `reservedRangeName` names.
 */
export function randomPublicAddresses(
  count: number,
  seed: number,
  options: AddressOptions = {},
): string[] {
  const random = seededRandom(seed);
  const next = () => Math.floor(random() * 4294967296); // uint32, same sequence as before
  const seen = new Set<string>();
  const out: string[] = [];
  const maxDraws = Math.max(1000, count * 50);
  let draws = 0;
  while (out.length < count) {
    const v4 = next() / 2 ** 32 < IPV4_SHARE;
    for (;;) {
      if (++draws > maxDraws) {
        throw new Error(`only ${out.length} of ${count} addresses kept after ${maxDraws} draws`);
      }
      const ip = v4 ? randomIpv4(next) : randomIpv6(next);
      if (seen.has(ip) || reservedRangeName(parseIp(ip)) !== null) continue;
      if (options.keep && !options.keep(ip)) continue;
      seen.add(ip);
      out.push(ip);
      break;
    }
  }
  return out;
}

/**
 * `count` random public addresses (seeded by `seed`) that the City database
 * of `dataDir` knows, checked with mmdb-lib's own reader (not ipintel's).
 */
export async function knownAddresses(
  dataDir: string,
  count: number,
  seed: number,
): Promise<string[]> {
  const manifest = await readManifest(dataDir);
  const cityEntry = manifest?.sources.find((s) => s.kind === "city");
  if (!cityEntry) throw new Error(`No City database in ${dataDir}: run "deno task data"`);
  const bytes = await Deno.readFile(`${dataDir}/${cityEntry.file}`);
  const city = new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  return randomPublicAddresses(count, seed, { keep: (ip) => city.get(ip) !== null });
}
