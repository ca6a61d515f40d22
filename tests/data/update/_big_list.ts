/** Big generated feeds for the tests and the benchmark that need a list of a given size. */

import { seededRandom } from "../../_random.ts";

/** An `ip-list` of random IPv4 addresses, one a line, at most `bytes` long (same seed, same text). */
export function randomIpv4List(bytes: number, seed = 1): string {
  const random = seededRandom(seed);
  const lines: string[] = [];
  let length = 0;
  for (;;) {
    const x = Math.floor(random() * 2 ** 32);
    const line = `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}\n`;
    if (length + line.length > bytes) break;
    lines.push(line);
    length += line.length;
  }
  return lines.join("");
}

/** An `ip-list` of random IPv6 addresses (the costliest tree: a node per bit of each path). */
export function randomIpv6List(bytes: number, seed = 1): string {
  const random = seededRandom(seed);
  const lines: string[] = [];
  let length = 0;
  for (;;) {
    const groups = Array.from({ length: 8 }, () => Math.floor(random() * 65536).toString(16));
    const line = `${groups.join(":")}\n`;
    if (length + line.length > bytes) break;
    lines.push(line);
    length += line.length;
  }
  return lines.join("");
}
