/**
 * What routing by Hono's router costs against the hand-written matcher it
 * replaced, on the same route table, without sockets.
 *
 * Run: `deno task bench:route` (deno bench bench/route_bench.ts).
 *
 * Each iteration routes 1,000 raw paths (a request's path, no query), a mix
 * weighted like traffic: 70% `/ip/{address}` (about 20% IPv6), then `/bulk`
 * lists, `/me`, ops (`/health`, `/metrics`), the compatible APIs (`/ipinfo/…`,
 * `/geoip/…`, `/json/…`) and unknown paths. Two groups: the whole mix, and
 * `/ip/` alone (the hot path); the hand-written matcher (the one before Hono,
 * kept here) is the baseline, and deno bench prints how many times slower
 * each router is. `matchRoute` is the RegExpRouter; TrieRouter and
 * PatternRouter are the alternatives it was chosen over (PatternRouter also
 * routes `/me/` to `/me`, which the table does not want).
 *
 * @module
 */

import { PatternRouter } from "hono/router/pattern-router";
import { TrieRouter } from "hono/router/trie-router";
import type { Router } from "hono/router";
import { matchRoute, ROUTES, type RouteSpec } from "../src/http/routes.ts";
import { seededRandom } from "../tests/_random.ts";
import { randomPublicAddresses } from "./_addresses.ts";

type Match = { index: number; param: string } | null;
const TABLE: readonly RouteSpec[] = ROUTES;

/** The matcher before Hono: exact paths in a map, `{param}` routes by prefix. */
function handWritten(): (path: string) => Match {
  const exact = new Map<string, number>();
  const prefixes: { prefix: string; index: number }[] = [];
  TABLE.forEach((route, index) => {
    const brace = route.path.indexOf("{");
    if (brace === -1) exact.set(route.path, index);
    else prefixes.push({ prefix: route.path.slice(0, brace), index });
  });
  return (path) => {
    for (const { prefix, index } of prefixes) {
      if (path.startsWith(prefix)) return { index, param: path.slice(prefix.length) };
    }
    const found = exact.get(path);
    if (found !== undefined) return { index: found, param: "" };
    for (const { prefix, index } of prefixes) {
      if (path.length === prefix.length - 1 && prefix.startsWith(path)) return { index, param: "" };
    }
    return null;
  };
}

/** The same table on another Hono router, registered as `matchRoute`'s. */
function onRouter(router: Router<{ index: number; prefix: string }>): (path: string) => Match {
  for (const exact of [true, false]) {
    TABLE.forEach((route, index) => {
      const brace = route.path.indexOf("{");
      if ((brace === -1) !== exact) return;
      const prefix = exact ? route.path : route.path.slice(0, brace);
      router.add("ALL", exact ? prefix : `${prefix}*`, { index, prefix });
    });
  }
  return (path) => {
    const route = router.match("ALL", path)[0][0]?.[0];
    return route === undefined
      ? null
      : { index: route.index, param: path.slice(route.prefix.length) };
  };
}

const addresses = randomPublicAddresses(1000, 11);
const random = seededRandom(5);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const address = () => pick(addresses);
const OTHERS: readonly (() => string)[] = [
  () => `/bulk/${address()},${address()},${address()}`,
  () => "/bulk",
  () => "/me",
  () => "/me",
  () => "/health",
  () => "/metrics",
  () => `/ipinfo/${address()}`,
  () => `/ipinfo/${address()}/city`,
  () => `/geoip/v2.1/city/${address()}`,
  () => `/json/${address()}`,
  () => "/favicon.ico",
  () => "/wp-login.php",
  () => "/iphone",
];
const MIX = Array.from(
  { length: 1000 },
  () => random() < 0.7 ? `/ip/${address()}` : pick(OTHERS)(),
);
const IP_ONLY = addresses.map((ip) => `/ip/${ip}`);

const variants: [string, (path: string) => Match][] = [
  ["hand-written (before)", handWritten()],
  ["RegExpRouter (matchRoute)", matchRoute],
  ["TrieRouter", onRouter(new TrieRouter())],
  ["PatternRouter", onRouter(new PatternRouter())],
];

// Every variant routes the mix alike (PatternRouter differs only on paths the mix lacks).
const reference = JSON.stringify(MIX.map(handWritten()));
for (const [name, match] of variants) {
  if (JSON.stringify(MIX.map(match)) !== reference) throw new Error(`${name} routes the mix apart`);
}

let sink = 0;
for (const [group, paths] of [["mix", MIX], ["/ip/ only", IP_ONLY]] as const) {
  variants.forEach(([name, match], i) => {
    Deno.bench(name, { group, baseline: i === 0 }, () => {
      for (const path of paths) sink += match(path)?.index ?? 0;
    });
  });
}
addEventListener("unload", () => {
  if (sink < 0) console.log(sink);
});
