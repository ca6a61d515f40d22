import assert from "node:assert/strict";
import ipaddr from "ipaddr.js";
import { type ParsedIp, parseIp } from "../../../src/base/ip/parse.ts";
import {
  IPV4_RESERVED_RANGES,
  IPV6_RESERVED_RANGES,
  reservedRangeName,
} from "../../../src/base/ip/reserved.ts";
import { seededRandom } from "../../_random.ts";

const F = "ffff:ffff:ffff:ffff:ffff:ffff:ffff";

// Each range's first and last address, and the addresses just outside it.
const CASES: { input: string; expected: string | null }[] = [
  { input: "0.0.0.0", expected: "unspecified" },
  { input: "0.0.0.1", expected: "this network" },
  { input: "0.255.255.255", expected: "this network" },
  { input: "1.0.0.0", expected: null },
  { input: "9.255.255.255", expected: null },
  { input: "10.0.0.0", expected: "private network" },
  { input: "10.255.255.255", expected: "private network" },
  { input: "11.0.0.0", expected: null },
  { input: "100.63.255.255", expected: null },
  { input: "100.64.0.0", expected: "carrier-grade NAT" },
  { input: "100.127.255.255", expected: "carrier-grade NAT" },
  { input: "100.128.0.0", expected: null },
  { input: "126.255.255.255", expected: null },
  { input: "127.0.0.0", expected: "loopback" },
  { input: "127.0.0.1", expected: "loopback" },
  { input: "127.255.255.255", expected: "loopback" },
  { input: "128.0.0.0", expected: null },
  { input: "169.253.255.255", expected: null },
  { input: "169.254.0.0", expected: "link-local" },
  { input: "169.254.255.255", expected: "link-local" },
  { input: "169.255.0.0", expected: null },
  { input: "172.15.255.255", expected: null },
  { input: "172.16.0.0", expected: "private network" },
  { input: "172.31.255.255", expected: "private network" },
  { input: "172.32.0.0", expected: null },
  { input: "191.255.255.255", expected: null },
  { input: "192.0.0.0", expected: "IETF protocol assignments" },
  { input: "192.0.0.255", expected: "IETF protocol assignments" },
  { input: "192.0.1.0", expected: null },
  { input: "192.0.1.255", expected: null },
  { input: "192.0.2.0", expected: "documentation" },
  { input: "192.0.2.255", expected: "documentation" },
  { input: "192.0.3.0", expected: null },
  { input: "192.88.98.255", expected: null },
  { input: "192.88.99.0", expected: "6to4 relay anycast" },
  { input: "192.88.99.255", expected: "6to4 relay anycast" },
  { input: "192.88.100.0", expected: null },
  { input: "192.167.255.255", expected: null },
  { input: "192.168.0.0", expected: "private network" },
  { input: "192.168.255.255", expected: "private network" },
  { input: "192.169.0.0", expected: null },
  { input: "198.17.255.255", expected: null },
  { input: "198.18.0.0", expected: "benchmarking" },
  { input: "198.19.255.255", expected: "benchmarking" },
  { input: "198.20.0.0", expected: null },
  { input: "198.51.99.255", expected: null },
  { input: "198.51.100.0", expected: "documentation" },
  { input: "198.51.100.255", expected: "documentation" },
  { input: "198.51.101.0", expected: null },
  { input: "203.0.112.255", expected: null },
  { input: "203.0.113.0", expected: "documentation" },
  { input: "203.0.113.255", expected: "documentation" },
  { input: "203.0.114.0", expected: null },
  { input: "223.255.255.255", expected: null },
  { input: "224.0.0.0", expected: "multicast" },
  { input: "239.255.255.255", expected: "multicast" },
  { input: "240.0.0.0", expected: "reserved" },
  { input: "255.255.255.254", expected: "reserved" },
  { input: "255.255.255.255", expected: "broadcast" },
  { input: "8.8.8.8", expected: null },
  { input: "1.1.1.1", expected: null },
  { input: "93.184.216.34", expected: null },
  { input: "::ffff:10.1.2.3", expected: "private network" }, // mapped, seen as IPv4
  { input: "::ffff:8.8.8.8", expected: null },
  // IPv6
  { input: "::", expected: "unspecified" },
  { input: "::1", expected: "loopback" },
  { input: "::2", expected: "reserved" },
  { input: "::1.2.3.4", expected: "reserved" }, // deprecated IPv4-compatible
  { input: "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", expected: "reserved" },
  { input: "64:ff9b::", expected: "IPv4/IPv6 translation" },
  { input: "64:ff9b::8.8.8.8", expected: "IPv4/IPv6 translation" },
  { input: "64:ff9b::ffff:ffff", expected: "IPv4/IPv6 translation" },
  { input: "64:ff9b::1:0:0", expected: "reserved" },
  { input: "64:ff9b:1::", expected: "IPv4/IPv6 translation" },
  { input: "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", expected: "IPv4/IPv6 translation" },
  { input: "64:ff9b:2::", expected: "reserved" },
  { input: "ff:" + F, expected: "reserved" },
  { input: "100::", expected: "discard-only" },
  { input: "100::ffff:ffff:ffff:ffff", expected: "discard-only" },
  { input: "100:0:0:1::", expected: "reserved" },
  { input: "1fff:" + F, expected: "reserved" },
  { input: "2000::", expected: null },
  { input: "2000:" + F, expected: null },
  { input: "2001::", expected: "Teredo" },
  { input: "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", expected: "Teredo" },
  { input: "2001:1::", expected: "IETF protocol assignments" },
  { input: "2001:1:ffff:ffff:ffff:ffff:ffff:ffff", expected: "IETF protocol assignments" },
  { input: "2001:2::", expected: "benchmarking" },
  { input: "2001:2:0:ffff:ffff:ffff:ffff:ffff", expected: "benchmarking" },
  { input: "2001:2:1::", expected: "IETF protocol assignments" },
  { input: "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", expected: "IETF protocol assignments" },
  { input: "2001:200::", expected: null },
  { input: "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", expected: null },
  { input: "2001:db8::", expected: "documentation" },
  { input: "2001:db8::1", expected: "documentation" },
  { input: "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", expected: "documentation" },
  { input: "2001:db9::", expected: null },
  { input: "2001:" + F, expected: null },
  { input: "2002::", expected: "6to4" },
  { input: "2002:" + F, expected: "6to4" },
  { input: "2003::", expected: null },
  { input: "3ffe:" + F, expected: null },
  { input: "3fff::", expected: "documentation" },
  { input: "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", expected: "documentation" },
  { input: "3fff:1000::", expected: null },
  { input: "3fff:" + F, expected: null },
  { input: "4000::", expected: "reserved" },
  { input: "5eff:" + F, expected: "reserved" },
  { input: "5f00::", expected: "segment routing (SRv6)" },
  { input: "5f00:" + F, expected: "segment routing (SRv6)" },
  { input: "5f01::", expected: "reserved" },
  { input: "fbff:" + F, expected: "reserved" },
  { input: "fc00::", expected: "unique local" },
  { input: "fd12:3456::1", expected: "unique local" },
  { input: "fdff:" + F, expected: "unique local" },
  { input: "fe00::", expected: "reserved" },
  { input: "fe7f:" + F, expected: "reserved" },
  { input: "fe80::", expected: "link-local" },
  { input: "febf:" + F, expected: "link-local" },
  { input: "fec0::", expected: "site-local (deprecated)" },
  { input: "feff:" + F, expected: "site-local (deprecated)" },
  { input: "ff00::", expected: "multicast" },
  { input: "ff02::1", expected: "multicast" },
  { input: "ffff:" + F, expected: "multicast" },
  { input: "2606:4700:4700::1111", expected: null },
  { input: "2a00:1450:4001::1", expected: null },
  { input: "2001:4860:4860::8888", expected: null },
];

for (const { input, expected } of CASES) {
  Deno.test(`reservedRangeName(${input}) is ${JSON.stringify(expected)}`, () => {
    assert.equal(reservedRangeName(parseIp(input)), expected);
  });
}

Deno.test("reservedRangeName names IPv4-mapped IPv6 bytes given directly", () => {
  const bytes = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 8, 8, 8, 8);
  assert.equal(reservedRangeName({ version: 6, address: "::ffff:808:808", bytes }), "IPv4-mapped");
});

// ---------- an independent reference: BigInt longest-prefix match ----------

function toBig(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

function fromBig(v: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let k = length - 1; k >= 0; k--) {
    out[k] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

interface Range {
  first: bigint;
  last: bigint;
  prefix: number;
  name: string;
}

function ranges(version: 4 | 6): Range[] {
  const bits = version === 4 ? 32 : 128;
  const table = version === 4 ? IPV4_RESERVED_RANGES : IPV6_RESERVED_RANGES;
  return table.map(([network, prefix, name]) => {
    const ip = parseIp(network);
    const first = ip.version === version ? toBig(ip.bytes) : (0xffffn << 32n) | toBig(ip.bytes); // "::ffff:0:0" parses as IPv4
    const size = 1n << BigInt(bits - prefix);
    return { first, last: first + size - 1n, prefix, name };
  });
}

function reference(v: bigint, table: Range[]): string | null {
  let best: Range | null = null;
  for (const r of table) {
    if (v >= r.first && v <= r.last && (best === null || r.prefix > best.prefix)) best = r;
  }
  return best?.name ?? null;
}

function ip(version: 4 | 6, v: bigint): ParsedIp {
  return { version, address: "", bytes: fromBig(v, version === 4 ? 4 : 16) };
}

for (const version of [4, 6] as const) {
  Deno.test(`reservedRangeName matches a longest-prefix reference at every IPv${version} range edge and on random addresses`, () => {
    const table = ranges(version);
    const max = version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    const probes: bigint[] = [];
    for (const r of table) {
      for (const d of [-1n, 0n, 1n]) probes.push(r.first + d, r.last + d);
    }
    const rand = seededRandom(version);
    for (let k = 0; k < 5000; k++) {
      const r = table[Math.floor(rand() * table.length)]!;
      // Random address inside a random range, or anywhere.
      const span = r.last - r.first + 1n;
      const offset = BigInt(Math.floor(rand() * 2 ** 53)) * BigInt(Math.floor(rand() * 2 ** 53));
      probes.push(k % 3 === 0 ? (offset * 0x9e3779b97f4a7c15n) & max : r.first + (offset % span));
    }
    for (const v of probes) {
      if (v < 0n || v > max) continue;
      assert.equal(reservedRangeName(ip(version, v)), reference(v, table), v.toString(16));
    }
  });
}

// ---------- cross-check with ipaddr.js range() names ----------

const V4_EQUIVALENT: Record<string, (string | null)[]> = {
  unspecified: ["unspecified", "this network"], // ipaddr.js: 0.0.0.0/8
  broadcast: ["broadcast"],
  multicast: ["multicast"],
  linkLocal: ["link-local"],
  loopback: ["loopback"],
  carrierGradeNat: ["carrier-grade NAT"],
  private: ["private network"],
  reserved: [
    "IETF protocol assignments",
    "documentation",
    "6to4 relay anycast",
    "benchmarking",
    "reserved",
  ],
  as112: [null],
  amt: [null],
  unicast: [null],
};

const V6_EQUIVALENT: Record<string, (string | null)[]> = {
  unspecified: ["unspecified"],
  linkLocal: ["link-local"],
  multicast: ["multicast"],
  loopback: ["loopback"],
  uniqueLocal: ["unique local"],
  ipv4Mapped: ["IPv4-mapped"],
  deprecatedSiteLocal: ["site-local (deprecated)"],
  discard: ["discard-only"],
  rfc6145: ["reserved"],
  rfc6052: ["IPv4/IPv6 translation"],
  "6to4": ["6to4"],
  teredo: ["Teredo"],
  benchmarking: ["benchmarking"],
  amt: ["IETF protocol assignments"],
  as112v6: ["IETF protocol assignments", null],
  deprecatedOrchid: ["IETF protocol assignments"],
  orchid2: ["IETF protocol assignments"],
  droneRemoteIdProtocolEntityTags: ["IETF protocol assignments"],
  segmentRouting: ["segment routing (SRv6)"],
  reserved: ["IETF protocol assignments", "documentation"],
  unicast: [null, "reserved"],
};

Deno.test("reservedRangeName agrees with ipaddr.js range() on random addresses", () => {
  const rand = seededRandom(7);
  const seen = new Set<string>();
  for (const version of [4, 6] as const) {
    const table = ranges(version);
    const max = version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    for (let k = 0; k < 20_000; k++) {
      let v: bigint;
      if (k % 2 === 0) {
        const r = table[Math.floor(rand() * table.length)]!;
        const n = BigInt(Math.floor(rand() * 2 ** 53)) * BigInt(Math.floor(rand() * 2 ** 53));
        v = r.first + (n % (r.last - r.first + 1n));
      } else {
        v = 0n;
        for (let w = 0; w < (version === 4 ? 1 : 4); w++) {
          v = (v << 32n) | BigInt(Math.floor(rand() * 2 ** 32));
        }
        v &= max;
      }
      const parsed = ip(version, v);
      const theirs = version === 4
        ? new ipaddr.IPv4([...parsed.bytes]).range()
        : new ipaddr.IPv6([...parsed.bytes]).range();
      const allowed = (version === 4 ? V4_EQUIVALENT : V6_EQUIVALENT)[theirs];
      assert.ok(allowed, `unknown ipaddr.js range ${theirs}`);
      const ours = reservedRangeName(parsed);
      assert.ok(allowed.includes(ours), `${v.toString(16)}: ipaddr ${theirs}, ours ${ours}`);
      seen.add(`${version}:${ours}`);
    }
  }
  // Every named range was exercised.
  for (const [, , name] of IPV4_RESERVED_RANGES) assert.ok(seen.has(`4:${name}`), name);
  for (const [, , name] of IPV6_RESERVED_RANGES) assert.ok(seen.has(`6:${name}`), name);
});

Deno.test("reserved range tables are well formed", () => {
  for (const [table, bits] of [[IPV4_RESERVED_RANGES, 32], [IPV6_RESERVED_RANGES, 128]] as const) {
    const keys = new Set<string>();
    for (const [network, prefix, name] of table) {
      assert.ok(prefix >= 1 && prefix <= bits, `${network}/${prefix}`);
      assert.ok(name.length > 0);
      const key = `${network}/${prefix}`;
      assert.ok(!keys.has(key), `duplicate ${key}`);
      keys.add(key);
    }
  }
});
