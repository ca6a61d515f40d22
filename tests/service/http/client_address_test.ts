import assert from "node:assert/strict";
import type { ForwardedHeader } from "../../../src/base/config.ts";
import { createClientAddressResolver } from "../../../src/service/http/client_address.ts";
import { fixtureApp, peer } from "../../_helpers.ts";

// Who /me says is calling, for every combination of peer, believed header and
// header values. Trusted proxies: 10.0.0.0/8, 2001:db8:ffff::/48 and 127.0.0.1.
const TRUSTED = ["10.0.0.0/8", "2001:db8:ffff::/48", "127.0.0.1"];

interface Case {
  name: string;
  peer: string;
  headers: Record<string, string>;
  /** The address /me looks up, or `400` when the request is refused. */
  expect: string | 400;
}

const XFF_CASES: Case[] = [
  // Untrusted peers: every forwarding header is ignored.
  {
    name: "spoofed XFF from an untrusted peer",
    peer: "81.2.69.142",
    headers: { "x-forwarded-for": "9.9.9.9" },
    expect: "81.2.69.142",
  },
  {
    name: "spoofed Forwarded from an untrusted peer",
    peer: "81.2.69.142",
    headers: { forwarded: "for=9.9.9.9" },
    expect: "81.2.69.142",
  },
  {
    name: "garbage XFF from an untrusted peer",
    peer: "81.2.69.142",
    headers: { "x-forwarded-for": "[::1" },
    expect: "81.2.69.142",
  },
  {
    name: "untrusted IPv6 peer",
    peer: "2a02:ec0::5",
    headers: { "x-forwarded-for": "9.9.9.9" },
    expect: "2a02:ec0::5",
  },
  // Trusted peers.
  { name: "trusted peer without the header", peer: "10.0.0.1", headers: {}, expect: "10.0.0.1" },
  {
    name: "one hop",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "client-sent hops left of the real one are ignored",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "1.1.1.1, 9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "chain of trusted proxies",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "1.1.1.1, 9.9.9.9, 10.0.0.3, 10.0.0.2" },
    expect: "9.9.9.9",
  },
  {
    name: "every hop trusted: the left-most",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "10.0.0.3, 10.0.0.2" },
    expect: "10.0.0.3",
  },
  {
    name: "a client-sent Forwarded does not beat the believed XFF",
    peer: "10.0.0.1",
    headers: { forwarded: "for=1.1.1.1", "x-forwarded-for": "9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "Forwarded alone is not read when XFF is believed",
    peer: "10.0.0.1",
    headers: { forwarded: "for=1.1.1.1" },
    expect: "10.0.0.1",
  },
  {
    name: "X-Real-IP is not read when XFF is believed",
    peer: "10.0.0.1",
    headers: { "x-real-ip": "1.1.1.1" },
    expect: "10.0.0.1",
  },
  {
    name: "trusted IPv6 peer, IPv6 client",
    peer: "2001:db8:ffff::1",
    headers: { "x-forwarded-for": "2a02:ec0::1" },
    expect: "2a02:ec0::1",
  },
  {
    name: "IPv4-mapped peer (node:http) is a trusted IPv4 peer",
    peer: "::ffff:127.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "IPv6 hop in brackets with a port",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "[2a02:ec0::1]:443" },
    expect: "2a02:ec0::1",
  },
  {
    name: "IPv4 hop with a port",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9:5555" },
    expect: "9.9.9.9",
  },
  {
    name: "empty list elements are skipped",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": ", 9.9.9.9 ,, " },
    expect: "9.9.9.9",
  },
  {
    name: "an IPv4-mapped hop is its IPv4 address",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "::ffff:9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "garbage left of the client is never read",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "<script>, 9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "unknown hop ends the walk at the proxy that wrote it",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9, unknown" },
    expect: "10.0.0.1",
  },
  {
    name: "garbage where the client should be",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9, not-an-ip" },
    expect: 400,
  },
  {
    name: "unclosed bracket",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "[2001:db8::1" },
    expect: 400,
  },
  {
    name: "IPv4 with trailing junk",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "8.8.8.8x" },
    expect: 400,
  },
  {
    name: "zone id",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "fe80::1%eth0" },
    expect: 400,
  },
  {
    name: "CIDR instead of an address",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.0/24" },
    expect: 400,
  },
];

const FORWARDED_CASES: Case[] = [
  {
    name: "Forwarded: one element",
    peer: "10.0.0.1",
    headers: { forwarded: "for=9.9.9.9;proto=https" },
    expect: "9.9.9.9",
  },
  {
    name: "Forwarded: chain with a trusted proxy",
    peer: "10.0.0.1",
    headers: { forwarded: "for=1.1.1.1, for=9.9.9.9;by=10.0.0.2, for=10.0.0.2" },
    expect: "9.9.9.9",
  },
  {
    name: "Forwarded: quoted IPv6 with a port",
    peer: "10.0.0.1",
    headers: { forwarded: 'for="[2a02:ec0::9]:4711"' },
    expect: "2a02:ec0::9",
  },
  {
    name: "Forwarded: parameter names are case-insensitive",
    peer: "10.0.0.1",
    headers: { forwarded: "By=10.0.0.1;For=9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "Forwarded: XFF is not read",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9" },
    expect: "10.0.0.1",
  },
  {
    name: "Forwarded: from an untrusted peer",
    peer: "81.2.69.142",
    headers: { forwarded: "for=9.9.9.9" },
    expect: "81.2.69.142",
  },
  {
    name: "Forwarded: malformed from an untrusted peer is not read",
    peer: "81.2.69.142",
    headers: { forwarded: "for=[2001:db8::1" },
    expect: "81.2.69.142",
  },
  {
    name: "Forwarded: unknown client",
    peer: "10.0.0.1",
    headers: { forwarded: "for=unknown" },
    expect: "10.0.0.1",
  },
  {
    name: "Forwarded: obfuscated client behind a proxy",
    peer: "10.0.0.1",
    headers: { forwarded: "for=_hidden, for=10.0.0.2" },
    expect: "10.0.0.2",
  },
  {
    name: "Forwarded: unclosed bracket",
    peer: "10.0.0.1",
    headers: { forwarded: "for=[2001:db8::1" },
    expect: 400,
  },
  {
    name: "Forwarded: unclosed bracket, quoted",
    peer: "10.0.0.1",
    headers: { forwarded: 'for="[2001:db8::1"' },
    expect: 400,
  },
  {
    name: "Forwarded: unclosed quote",
    peer: "10.0.0.1",
    headers: { forwarded: 'for="[2001:db8::1]' },
    expect: 400,
  },
  {
    name: "Forwarded: IPv4 with junk in brackets",
    peer: "10.0.0.1",
    headers: { forwarded: "for=[8.8.8.8x" },
    expect: 400,
  },
  {
    name: "Forwarded: IPv4 in brackets",
    peer: "10.0.0.1",
    headers: { forwarded: 'for="[8.8.8.8]"' },
    expect: 400,
  },
  {
    name: "Forwarded: IPv6 with junk in brackets",
    peer: "10.0.0.1",
    headers: { forwarded: 'for="[2001:db8::1x]"' },
    expect: 400,
  },
  {
    name: "Forwarded: a comma inside quotes is not a separator",
    peer: "10.0.0.1",
    headers: { forwarded: 'for="9.9.9.9, for=1.1.1.1"' },
    expect: 400,
  },
  {
    name: "Forwarded: a repeated parameter",
    peer: "10.0.0.1",
    headers: { forwarded: "for=9.9.9.9;for=1.1.1.1" },
    expect: 400,
  },
  { name: "Forwarded: no value", peer: "10.0.0.1", headers: { forwarded: "for=" }, expect: 400 },
];

const REAL_IP_CASES: Case[] = [
  {
    name: "X-Real-IP from a trusted peer",
    peer: "10.0.0.1",
    headers: { "x-real-ip": "9.9.9.9" },
    expect: "9.9.9.9",
  },
  {
    name: "X-Real-IP from an untrusted peer",
    peer: "81.2.69.142",
    headers: { "x-real-ip": "9.9.9.9" },
    expect: "81.2.69.142",
  },
  {
    name: "X-Real-IP: XFF is not read",
    peer: "10.0.0.1",
    headers: { "x-forwarded-for": "9.9.9.9" },
    expect: "10.0.0.1",
  },
  {
    name: "X-Real-IP: IPv6",
    peer: "10.0.0.1",
    headers: { "x-real-ip": "2a02:ec0::1" },
    expect: "2a02:ec0::1",
  },
  {
    name: "X-Real-IP: two values",
    peer: "10.0.0.1",
    headers: { "x-real-ip": "9.9.9.9, 1.1.1.1" },
    expect: 400,
  },
  {
    name: "X-Real-IP: garbage",
    peer: "10.0.0.1",
    headers: { "x-real-ip": "localhost" },
    expect: 400,
  },
];

const TABLES: [ForwardedHeader, Case[]][] = [
  ["x-forwarded-for", XFF_CASES],
  ["forwarded", FORWARDED_CASES],
  ["x-real-ip", REAL_IP_CASES],
];

for (const [forwardedHeader, cases] of TABLES) {
  Deno.test(`/me with IPINTEL_FORWARDED_HEADER=${forwardedHeader}: every case of the table`, async () => {
    const app = await fixtureApp({ config: { trustedProxies: TRUSTED, forwardedHeader } });
    for (const c of cases) {
      const response = await app.request("/me?get=ip", { headers: c.headers }, peer(c.peer));
      const body = await response.json();
      if (c.expect === 400) {
        assert.equal(response.status, 400, `${c.name}: ${JSON.stringify(body)}`);
        const headerName = {
          "x-forwarded-for": "X-Forwarded-For",
          forwarded: "Forwarded",
          "x-real-ip": "X-Real-IP",
        }[forwardedHeader];
        assert.match(
          body.message,
          new RegExp(`^Invalid ${headerName} header from a trusted proxy: "`),
          c.name,
        );
        continue;
      }
      // A found address answers 200; one without data (documentation, private) names it in a 404.
      const resolved = body.data?.ip ?? /IP address "([^"]+)"/.exec(body.message)?.[1];
      assert.equal(resolved, c.expect, `${c.name}: ${JSON.stringify(body)}`);
    }
  });
}

Deno.test("the resolver is the one entry point: options in, (peer, headers) → address out", () => {
  const resolve = createClientAddressResolver({
    trustedProxies: ["10.0.0.0/8"],
    forwardedHeader: "x-forwarded-for",
  });
  const headers = new Headers({ "x-forwarded-for": "2001:DB8::0:1" });
  assert.equal(resolve("10.1.2.3", headers), "2001:db8::1", "canonical text");
  assert.equal(resolve("192.0.2.1", headers), "192.0.2.1");
  assert.equal(resolve("/run/ipintel.sock", headers), "/run/ipintel.sock", "not an IP peer");
  assert.throws(
    () =>
      createClientAddressResolver({
        trustedProxies: ["10.0.0.0/33"],
        forwardedHeader: "forwarded",
      }),
    /10\.0\.0\.0\/33/,
  );
  assert.throws(
    () =>
      createClientAddressResolver({
        trustedProxies: [],
        forwardedHeader: "x-client-ip" as ForwardedHeader,
      }),
    /x-client-ip/,
  );
});

Deno.test("a refused forwarding header is echoed capped in the message", async () => {
  const app = await fixtureApp({ config: { trustedProxies: TRUSTED } });
  const long = "x".repeat(5000);
  const response = await app.request(
    "/me",
    { headers: { "x-forwarded-for": long } },
    peer("10.0.0.1"),
  );
  assert.equal(response.status, 400);
  const { message } = await response.json();
  assert.ok(message.length < 200, `${message.length} characters`);
});
