import assert from "node:assert/strict";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { InvalidIpError } from "../../../src/base/errors.ts";
import { formatIpv6, MAX_IP_TEXT_LENGTH, parseIp } from "../../../src/base/ip/parse.ts";
import { pythonWith } from "../../_python.ts";
import { seededRandom } from "../../_random.ts";
import { ignoredName } from "../../_skip.ts";

const VALID: { input: string; expected: { version: 4 | 6; address: string } }[] = [
  // IPv4
  { input: "0.0.0.0", expected: { version: 4, address: "0.0.0.0" } },
  { input: "1.2.3.4", expected: { version: 4, address: "1.2.3.4" } },
  { input: "192.168.1.10", expected: { version: 4, address: "192.168.1.10" } },
  { input: "10.0.0.255", expected: { version: 4, address: "10.0.0.255" } },
  { input: "255.255.255.255", expected: { version: 4, address: "255.255.255.255" } },
  { input: "8.8.8.8", expected: { version: 4, address: "8.8.8.8" } },
  // IPv6 zero-run compression
  { input: "::", expected: { version: 6, address: "::" } },
  { input: "0:0:0:0:0:0:0:0", expected: { version: 6, address: "::" } },
  { input: "::1", expected: { version: 6, address: "::1" } },
  { input: "0:0:0:0:0:0:0:1", expected: { version: 6, address: "::1" } },
  { input: "1::", expected: { version: 6, address: "1::" } },
  { input: "2001:db8::1", expected: { version: 6, address: "2001:db8::1" } },
  { input: "2001:DB8::1", expected: { version: 6, address: "2001:db8::1" } },
  { input: "2001:db8:0:0:0:0:2:1", expected: { version: 6, address: "2001:db8::2:1" } },
  {
    input: "2001:0db8:0000:0000:0000:0000:0000:0001",
    expected: { version: 6, address: "2001:db8::1" },
  },
  // One zero group is not compressed (RFC 5952 4.2.2).
  { input: "2001:db8:0:1:1:1:1:1", expected: { version: 6, address: "2001:db8:0:1:1:1:1:1" } },
  { input: "2001:db8::1:1:1:1:1", expected: { version: 6, address: "2001:db8:0:1:1:1:1:1" } },
  { input: "1:2:3:4:5:6:7::", expected: { version: 6, address: "1:2:3:4:5:6:7:0" } },
  { input: "::2:3:4:5:6:7:8", expected: { version: 6, address: "0:2:3:4:5:6:7:8" } },
  { input: "1::2:3:4:5:6:7", expected: { version: 6, address: "1:0:2:3:4:5:6:7" } },
  // Longest run wins; the first on ties (RFC 5952 4.2.3).
  { input: "2001:0:0:1:0:0:0:1", expected: { version: 6, address: "2001:0:0:1::1" } },
  { input: "2001:db8:0:0:1:0:0:1", expected: { version: 6, address: "2001:db8::1:0:0:1" } },
  { input: "1:0:0:0:1:0:0:0", expected: { version: 6, address: "1::1:0:0:0" } },
  { input: "0:0:0:0:1:0:0:0", expected: { version: 6, address: "::1:0:0:0" } },
  { input: "0:0:1:0:0:0:1:0", expected: { version: 6, address: "0:0:1::1:0" } },
  { input: "1:2:3:4:5:6:7:8", expected: { version: 6, address: "1:2:3:4:5:6:7:8" } },
  {
    input: "FE80:0000:0000:0000:0202:B3FF:FE1E:8329",
    expected: { version: 6, address: "fe80::202:b3ff:fe1e:8329" },
  },
  { input: "fe80::1", expected: { version: 6, address: "fe80::1" } },
  { input: "ff02::1", expected: { version: 6, address: "ff02::1" } },
  { input: "aBcD:eF01::0a", expected: { version: 6, address: "abcd:ef01::a" } },
  // Embedded IPv4 tails that are not mapped stay IPv6, in hex.
  { input: "::1.2.3.4", expected: { version: 6, address: "::102:304" } },
  { input: "::0.0.0.1", expected: { version: 6, address: "::1" } },
  { input: "64:ff9b::192.0.2.33", expected: { version: 6, address: "64:ff9b::c000:221" } },
  { input: "1:2:3:4:5:6:1.2.3.4", expected: { version: 6, address: "1:2:3:4:5:6:102:304" } },
  { input: "1::1.2.3.4", expected: { version: 6, address: "1::102:304" } },
  { input: "::ffff:0:1.2.3.4", expected: { version: 6, address: "::ffff:0:102:304" } },
  {
    input: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
    expected: { version: 6, address: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
  },
  // IPv4-mapped IPv6 is reported as IPv4.
  { input: "::ffff:1.2.3.4", expected: { version: 4, address: "1.2.3.4" } },
  { input: "::FFFF:1.2.3.4", expected: { version: 4, address: "1.2.3.4" } },
  { input: "::ffff:0102:0304", expected: { version: 4, address: "1.2.3.4" } },
  { input: "::ffff:102:304", expected: { version: 4, address: "1.2.3.4" } },
  { input: "0:0:0:0:0:ffff:1.2.3.4", expected: { version: 4, address: "1.2.3.4" } },
  { input: "0:0:0:0:0:ffff:c0a8:0101", expected: { version: 4, address: "192.168.1.1" } },
  { input: "::ffff:0.0.0.0", expected: { version: 4, address: "0.0.0.0" } },
  { input: "::ffff:ffff:ffff", expected: { version: 4, address: "255.255.255.255" } },
  {
    input: "0000:0000:0000:0000:0000:ffff:255.255.255.255",
    expected: { version: 4, address: "255.255.255.255" },
  },
];

for (const { input, expected } of VALID) {
  Deno.test(`parseIp accepts ${JSON.stringify(input)} as IPv${expected.version} ${expected.address}`, () => {
    const ip = parseIp(input);
    assert.equal(ip.version, expected.version);
    assert.equal(ip.address, expected.address);
    assert.equal(ip.bytes.length, expected.version === 4 ? 4 : 16);
    // The canonical text parses back to the same address.
    assert.deepEqual(parseIp(ip.address), ip);
  });
}

Deno.test("parseIp returns network-order bytes", () => {
  assert.deepEqual([...parseIp("1.2.3.4").bytes], [1, 2, 3, 4]);
  assert.deepEqual([...parseIp("::ffff:1.2.3.4").bytes], [1, 2, 3, 4]);
  assert.deepEqual(
    [...parseIp("102:304:506:708:90a:b0c:d0e:f10").bytes],
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
  );
  assert.deepEqual([...parseIp("1::ff").bytes], [0, 1, ...new Array(13).fill(0), 0xff]);
});

Deno.test("parseIp results stay correct and independent across many calls (pooled bytes)", () => {
  const kept: { text: string; ip: ReturnType<typeof parseIp> }[] = [];
  for (let k = 0; k < 3000; k++) {
    const text = k % 2 === 0 ? `10.${k >> 8}.${k & 255}.1` : `2001:db8::${k.toString(16)}`;
    kept.push({ text, ip: parseIp(text) });
  }
  for (const { text, ip } of kept) {
    assert.equal(ip.bytes.byteLength, ip.version === 4 ? 4 : 16);
    assert.deepEqual(ip, parseIp(text), text);
  }
  // Writing into one result does not touch another.
  const a = parseIp("1.2.3.4");
  const b = parseIp("5.6.7.8");
  a.bytes[3] = 99;
  assert.deepEqual([...b.bytes], [5, 6, 7, 8]);
});

Deno.test("parseIp accepts '::' at every position and length, with the RFC 5952 text", () => {
  let checked = 0;
  for (let start = 0; start < 8; start++) {
    for (let len = 1; start + len <= 8; len++) {
      const groups = Array.from(
        { length: 8 },
        (_, g) => (g >= start && g < start + len ? 0 : g + 1),
      );
      const hex = groups.map((g) => g.toString(16));
      const expected = len === 1
        ? hex.join(":")
        : `${hex.slice(0, start).join(":")}::${hex.slice(start + len).join(":")}`;
      const full = parseIp(hex.join(":"));
      assert.equal(full.address, expected, hex.join(":"));
      // Every way of compressing a sub-run of the zero block means the same address.
      for (let a = start; a < start + len; a++) {
        for (let b = a + 1; b <= start + len; b++) {
          const text = `${hex.slice(0, a).join(":")}::${hex.slice(b).join(":")}`;
          assert.deepEqual(parseIp(text), full, text);
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 100);
});

const INVALID: { input: string; reason: string }[] = [
  { input: "", reason: "empty" },
  { input: " 1.2.3.4", reason: "surrounding spaces" },
  { input: "1.2.3.4 ", reason: "surrounding spaces" },
  { input: "1.2.3.4\n", reason: "surrounding spaces" },
  { input: "\t::1", reason: "surrounding spaces" },
  { input: "::1\u00a0", reason: "surrounding spaces" },
  { input: "1.2. 3.4", reason: "inside an address" },
  { input: "2001:db8:: 1", reason: "inside an address" },
  { input: "fe80::1%eth0", reason: "zone ids are not accepted" },
  { input: "fe80::1%25eth0", reason: "zone ids are not accepted" },
  { input: "1.2.3.4%1", reason: "zone ids are not accepted" },
  { input: "%ZZ", reason: "it starts with '%' (a malformed escape?)" },
  { input: "1.2.3.0/24", reason: "CIDR prefixes are not accepted" },
  { input: "2001:db8::/32", reason: "CIDR prefixes are not accepted" },
  { input: "01.2.3.4", reason: "leading zeros" },
  { input: "1.2.3.04", reason: "leading zeros" },
  { input: "1.2.3.00", reason: "leading zeros" },
  { input: "001.2.3.4", reason: "leading zeros" },
  { input: "0001.2.3.4", reason: "leading zeros" },
  { input: "::ffff:1.2.3.04", reason: "leading zeros" },
  { input: "1.2.3", reason: "exactly 4 decimal octets, got 3" },
  { input: "1.2.3.4.5", reason: "exactly 4 decimal octets, got 5" },
  { input: "16909060", reason: "exactly 4 decimal octets, got 1" },
  { input: "127.1", reason: "exactly 4 decimal octets, got 2" },
  { input: "1.2.3.", reason: "empty IPv4 octet" },
  { input: ".1.2.3", reason: "empty IPv4 octet" },
  { input: "1..2.3", reason: "empty IPv4 octet" },
  { input: "256.1.1.1", reason: "256 is greater than 255" },
  { input: "1.2.3.999", reason: "999 is greater than 255" },
  { input: "1.2.3.1234", reason: "at most 3 digits" },
  { input: "0x7f.0.0.1", reason: "hexadecimal" },
  { input: "0x7f.1", reason: "hexadecimal" },
  { input: "1.2.3.a", reason: 'invalid character "a"' },
  { input: "localhost", reason: 'invalid character "l"' },
  { input: "１.２.３.４", reason: 'invalid character "１"' },
  { input: "1.2.3.4\u0000", reason: "invalid character" },
  { input: "[::1]", reason: "brackets are not accepted; give the address alone" },
  { input: "[::1", reason: 'invalid character "["' },
  { input: "[x]:80", reason: 'invalid character "["' },
  { input: "::-1", reason: 'invalid character "-"' },
  { input: "g::1", reason: 'invalid character "g"' },
  { input: "1:2:3:4:5:6:7", reason: "needs 8 groups, got 7" },
  { input: "1:2", reason: "needs 8 groups, got 2" },
  { input: "1:2:3:4:5:6:7:8:9", reason: "too many groups" },
  { input: "1::2:3:4:5:6:7:8", reason: "too many groups" },
  { input: "1:2:3:4:5:6:7:8::", reason: "too many groups" },
  { input: "1:2:3:4:5:6:7:1.2.3.4", reason: "too many groups" },
  { input: "1::2::3", reason: "'::' may appear only once" },
  { input: "::1::", reason: "'::' may appear only once" },
  { input: "1:::2", reason: "':::'" },
  { input: ":::", reason: "':::'" },
  { input: ":", reason: "single ':'" },
  { input: ":1:2:3:4:5:6:7", reason: "start with a single ':'" },
  { input: "1:2:3:4:5:6:7:", reason: "end with a single ':'" },
  { input: "12345::", reason: "at most 4 hex digits" },
  { input: "::ffff:1.2.3", reason: "exactly 4 decimal octets, got 3" },
  { input: "::ffff:256.1.1.1", reason: "greater than 255" },
  { input: "::1.2.3.4:ab", reason: "must come last" },
  { input: "1.2.3.4::", reason: "must come last" },
  { input: "1.2.3.4:123456", reason: "must come last" },
  { input: "1.2.3:80", reason: "must come last" },
  // An address with a port, as logs and URLs write it.
  { input: "203.0.113.10:51234", reason: 'it carries a port (":51234"); give the address alone' },
  { input: "1.2.3.4:80", reason: 'it carries a port (":80"); give the address alone' },
  { input: "::ffff:1.2.3.4:1", reason: 'it carries a port (":1"); give the address alone' },
  { input: "[2001:db8::1]:443", reason: 'it carries a port (":443"); give the address alone' },
  {
    input: "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535",
    reason: 'it carries a port (":65535"); give the address alone',
  },
  { input: "[2001:db8::1]:https", reason: 'invalid character "["' },
  { input: "x".repeat(MAX_IP_TEXT_LENGTH + 1), reason: "too long" },
  { input: `${"0".repeat(40)}:1.2.3.4`, reason: "too long" },
];

for (const { input, reason } of INVALID) {
  Deno.test(`parseIp rejects ${JSON.stringify(input)}: ${reason}`, () => {
    assert.throws(() => parseIp(input), (e: unknown) => {
      assert.ok(e instanceof InvalidIpError, String(e));
      assert.equal(e.code, "invalid_ip");
      assert.ok(e.message.includes(reason), `${e.message} lacks ${JSON.stringify(reason)}`);
      return true;
    });
  });
}

Deno.test("parseIp rejects a 100 KB input with a short message", () => {
  // Its cost (a length check before any scan) is measured in bench/ip_parser_bench.ts.
  const huge = "1".repeat(100_000);
  assert.throws(() => parseIp(huge), (e: unknown) => {
    assert.ok(e instanceof InvalidIpError);
    assert.ok(e.message.includes("too long"), e.message);
    assert.ok(e.message.length < 200, e.message);
    assert.ok(e.message.includes(`"${"1".repeat(64)}…"`), e.message);
    return true;
  });
});

Deno.test("parseIp names the port of an address written with one, in the API's message style", () => {
  assert.throws(
    () => parseIp("203.0.113.10:51234"),
    new InvalidIpError(
      "203.0.113.10:51234",
      'it carries a port (":51234"); give the address alone',
    ),
  );
  assert.throws(() => parseIp("[2001:db8::1]:443"), {
    message: 'Invalid IP address "[2001:db8::1]:443": it carries a port (":443"); ' +
      "give the address alone",
  });
});

Deno.test("parseIp rejects non-string input with InvalidIpError", () => {
  assert.throws(() => parseIp(undefined as unknown as string), InvalidIpError);
  assert.throws(() => parseIp(1234 as unknown as string), InvalidIpError);
});

// ---------- random cross-checks ----------

/** Random 16 bytes with plenty of zero groups, so compression is exercised. */
function randomIpv6Bytes(r: () => number): Uint8Array {
  const b = new Uint8Array(16);
  for (let g = 0; g < 8; g++) {
    const kind = r();
    if (kind < 0.45) continue; // zero group
    const value = kind < 0.6 ? Math.floor(r() * 16) : Math.floor(r() * 0x10000);
    b[g * 2] = value >> 8;
    b[g * 2 + 1] = value & 0xff;
  }
  return b;
}

/** A random valid textual form of `b`: full or compressed, random case and leading zeros. */
function randomIpv6Text(b: Uint8Array, r: () => number): string {
  const groups: string[] = [];
  for (let g = 0; g < 8; g++) {
    let h = (((b[g * 2] ?? 0) << 8) | (b[g * 2 + 1] ?? 0)).toString(16);
    if (r() < 0.3) h = h.padStart(1 + Math.floor(r() * 4), "0");
    if (r() < 0.3) h = h.toUpperCase();
    groups.push(h);
  }
  if (r() < 0.2) {
    const tail = `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
    groups.splice(6, 2, tail);
  }
  // Compress a random run of zero groups (never the IPv4 tail).
  const zeroRuns: [number, number][] = [];
  const limit = groups.length === 7 ? 6 : 8;
  for (let g = 0; g < limit; g++) {
    if (/^0+$/.test(groups[g] ?? "")) {
      for (let e = g + 1; e <= limit && /^0+$/.test(groups[e - 1] ?? ""); e++) {
        zeroRuns.push([g, e]);
      }
    }
  }
  if (zeroRuns.length > 0 && r() < 0.7) {
    const [s, e] = zeroRuns[Math.floor(r() * zeroRuns.length)]!;
    return `${groups.slice(0, s).join(":")}::${groups.slice(e).join(":")}`;
  }
  return groups.join(":");
}

function toHex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

const RANDOM_COUNT = 5000;

function randomTexts(seed: number): { text: string; bytes: Uint8Array }[] {
  const r = seededRandom(seed);
  const out: { text: string; bytes: Uint8Array }[] = [];
  for (let k = 0; k < RANDOM_COUNT; k++) {
    const b = randomIpv6Bytes(r);
    if (k % 10 === 0) b.set([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 0); // mapped
    out.push({ text: randomIpv6Text(b, r), bytes: b });
  }
  return out;
}

Deno.test("parseIp agrees with ipaddr.js and node:net on random IPv6 forms", () => {
  for (const { text, bytes } of randomTexts(1)) {
    assert.equal(isIP(text), 6, text);
    const ours = parseIp(text);
    const theirs = ipaddr.IPv6.parse(text);
    if (theirs.isIPv4MappedAddress()) {
      assert.equal(ours.version, 4, text);
      assert.equal(ours.address, theirs.toIPv4Address().toString(), text);
      assert.equal(toHex(ours.bytes), toHex(bytes.subarray(12)), text);
    } else {
      assert.equal(ours.version, 6, text);
      assert.equal(ours.address, theirs.toRFC5952String(), text);
      assert.equal(toHex(ours.bytes), toHex(bytes), text);
      assert.equal(formatIpv6(bytes), ours.address);
    }
  }
});

Deno.test("parseIp agrees with ipaddr.js and node:net on random IPv4 addresses", () => {
  const r = seededRandom(2);
  for (let k = 0; k < RANDOM_COUNT; k++) {
    const octets = [0, 0, 0, 0].map(() => Math.floor(r() * (r() < 0.2 ? 10 : 256)));
    const text = octets.join(".");
    assert.equal(isIP(text), 4);
    const ours = parseIp(text);
    assert.equal(ours.version, 4);
    assert.equal(ours.address, ipaddr.IPv4.parse(text).toString());
    assert.deepEqual([...ours.bytes], octets);
  }
});

/** A Python with the ipaddress module, for the cross-check; null when there is none. */
const IPADDRESS_PYTHON = await pythonWith("import ipaddress");

/** Runs `script` under IPADDRESS_PYTHON with `lines` as JSON on its standard input. */
async function python(script: string, lines: string[]): Promise<(string | null)[]> {
  assert.ok(IPADDRESS_PYTHON, "no python3 with ipaddress");
  const child = new Deno.Command(IPADDRESS_PYTHON, {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(lines)));
  await writer.close();
  const { success, stdout } = await child.output();
  assert.ok(success, "python3 failed");
  return JSON.parse(new TextDecoder().decode(stdout));
}

const PY_CANONICAL = `
import ipaddress, json, sys
out = []
for s in json.load(sys.stdin):
    try:
        a = ipaddress.ip_address(s)
        if a.version == 6 and a.ipv4_mapped is not None:
            a = a.ipv4_mapped
        out.append(str(a))
    except ValueError:
        out.append(None)
print(json.dumps(out))
`;

const MATCHES_PYTHON = ignoredName(
  "parseIp matches Python ipaddress on canonical text and on validity",
  IPADDRESS_PYTHON ? null : "no python3 with ipaddress",
);
Deno.test(MATCHES_PYTHON, { ignore: !IPADDRESS_PYTHON }, async () => {
  const texts = randomTexts(3).map((x) => x.text);
  // Near-valid strings: single-character edits of valid forms.
  const r = seededRandom(4);
  const alphabet = "0123456789abcdefABCDEFg:.:.:";
  const mutants: string[] = [];
  for (const base of [...texts.slice(0, 3000), "1.2.3.4", "10.20.30.40", "::ffff:1.2.3.4"]) {
    for (let m = 0; m < 2; m++) {
      const at = Math.floor(r() * (base.length + 1));
      const ch = alphabet[Math.floor(r() * alphabet.length)] ?? "";
      const op = r();
      const s = op < 0.33
        ? base.slice(0, at) + ch + base.slice(at)
        : op < 0.66
        ? base.slice(0, at) + base.slice(at + 1)
        : base.slice(0, at) + ch + base.slice(at + 1);
      if (s.length <= MAX_IP_TEXT_LENGTH) mutants.push(s);
    }
  }
  const all = [...texts, ...mutants];
  const expected = await python(PY_CANONICAL, all);
  assert.equal(expected.length, all.length);
  let valid = 0;
  all.forEach((s, k) => {
    let ours: string | null = null;
    try {
      ours = parseIp(s).address;
    } catch (e) {
      assert.ok(e instanceof InvalidIpError, String(e));
    }
    assert.equal(ours, expected[k], JSON.stringify(s));
    if (ours !== null) valid++;
  });
  assert.ok(valid > RANDOM_COUNT, `only ${valid} valid`);
});

Deno.test("parseIp only ever throws InvalidIpError on random junk", () => {
  const r = seededRandom(5);
  const alphabet = "0123456789abcdefxX:.%/ \t[]-ff:ffff::1.2.3.";
  for (let k = 0; k < 20_000; k++) {
    let s = "";
    const len = Math.floor(r() * 50);
    for (let c = 0; c < len; c++) s += alphabet[Math.floor(r() * alphabet.length)];
    try {
      const ip = parseIp(s);
      assert.deepEqual(parseIp(ip.address), ip, s);
    } catch (e) {
      assert.ok(e instanceof InvalidIpError, `${JSON.stringify(s)}: ${e}`);
    }
  }
});
