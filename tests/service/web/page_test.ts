/** `/` and `/assets/*` in-process: the page for browsers, /me for everyone else, the assets. */

import assert from "node:assert/strict";
import { gunzipSync, gzipSync } from "node:zlib";
import { ConfigError, loadConfig } from "../../../src/base/config.ts";
import { type DataSet, openDataSet } from "../../../src/data/sources/data_set.ts";
import { fixtureApp, peer } from "../../_helpers.ts";
import { LISTED, writeListedDataDir } from "./_lists.ts";

const BROWSER_ACCEPT =
  "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

function app(web?: boolean, data?: DataSet) {
  return fixtureApp({ config: { bulkMax: 25, web }, data });
}

const site = await app();
const from = peer("81.2.69.142") as unknown as undefined;
const get = (path: string, headers: Record<string, string> = {}) =>
  site.request(path, { headers }, from);

/** The page's asset URLs, as its HTML links them. */
async function assetUrls(): Promise<string[]> {
  const html = await (await get("/", { accept: BROWSER_ACCEPT })).text();
  return [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

Deno.test("a browser asking for / gets the page, with a CSP that allows nothing inline", async () => {
  const response = await get("/", { accept: BROWSER_ACCEPT });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
  const csp = response.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.match(response.headers.get("vary") ?? "", /Accept/);
  const html = await response.text();
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /data-bulk-max="25"/, "the bulk limit of this server");
  assert.match(html, /Up to 25 addresses/);
  // Every script is a file, no inline script, style or handler; nothing from another host.
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /src="\/assets\//);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  assert.doesNotMatch(html, /(?:href|src)="(?:https?:)?\/\//);
  // Every form field has its label.
  for (const [, id] of html.matchAll(/<(?:input|textarea)[^>]*\bid="([^"]+)"/g)) {
    assert.match(html, new RegExp(`<label for="${id}"`), `label for #${id}`);
  }
});

Deno.test("curl asking for / gets what /me answers, in JSON", async () => {
  for (const accept of [undefined, "*/*", "application/json", "text/html;q=0"]) {
    const headers: Record<string, string> = accept ? { accept } : {};
    const root = await get("/", headers);
    const me = await get("/me", headers);
    assert.equal(root.status, 200, String(accept));
    assert.equal(root.headers.get("content-type"), "application/json; charset=utf-8");
    assert.match(root.headers.get("vary") ?? "", /Accept/);
    assert.deepEqual(await root.json(), await me.json());
  }
  // The query options of /me apply to / too.
  const xml = await get("/?format=xml");
  assert.match(await xml.text(), /<ip>81\.2\.69\.142<\/ip>/);
});

Deno.test("with IPINTEL_WEB=false, / answers like /me for browsers too and there are no assets", async () => {
  const off = await app(false);
  const root = await off.request("/", { headers: { accept: BROWSER_ACCEPT } }, from);
  assert.equal(root.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal((await root.json()).data.ip, "81.2.69.142");
  const [asset] = await assetUrls();
  const missing = await off.request(asset!);
  assert.equal(missing.status, 404);
  assert.equal(loadConfig({ IPINTEL_WEB: "false" }).web, false);
  assert.equal(loadConfig({}).web, true);
  assert.throws(() => loadConfig({ IPINTEL_WEB: "maybe" }), (e) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /IPINTEL_WEB "maybe"/);
    return true;
  });
});

Deno.test("assets are content-hashed, cached for a year, revalidated by ETag, and gzipped on request", async () => {
  const urls = await assetUrls();
  assert.deepEqual(urls.map((u) => u.replace(/\.[0-9a-f]{16}\./, ".H.")).sort(), [
    "/assets/app.H.js",
    "/assets/style.H.css",
    "/assets/world.H.svg",
  ]);
  for (const url of urls) {
    const plain = await get(url);
    assert.equal(plain.status, 200, url);
    assert.match(plain.headers.get("cache-control")!, /max-age=31536000, immutable/);
    const etag = plain.headers.get("etag")!;
    assert.ok(url.includes(etag.slice(1, -1)), "the ETag is the hash in the name");
    const body = new Uint8Array(await plain.arrayBuffer());
    const gzipped = await get(url, { "accept-encoding": "gzip, deflate, br" });
    assert.equal(gzipped.headers.get("content-encoding"), "gzip");
    assert.deepEqual(new Uint8Array(gunzipSync(new Uint8Array(await gzipped.arrayBuffer()))), body);
    const again = await get(url, { "if-none-match": etag });
    assert.equal(again.status, 304);
  }
  assert.equal((await get("/assets/app.0000000000000000.js")).status, 404);
  assert.equal((await get("/assets/..%2Fsite.ts")).status, 404);
});

Deno.test("the whole page weighs under 300 KB compressed", async () => {
  const html = await (await get("/", { accept: BROWSER_ACCEPT })).arrayBuffer();
  let total = gzipSync(new Uint8Array(html)).byteLength;
  for (const url of await assetUrls()) {
    const response = await get(url, { "accept-encoding": "gzip" });
    total += (await response.arrayBuffer()).byteLength;
  }
  assert.ok(total < 300_000, `${total} bytes`);
});

Deno.test("the world map is Natural Earth geometry in the page's equirectangular frame", async () => {
  const url = (await assetUrls()).find((u) => u.includes("/world."))!;
  const svg = await (await get(url)).text();
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 960 480">/);
  const numbers = [...svg.matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [+m[1]!, +m[2]!]);
  assert.ok(numbers.length > 5000, `${numbers.length} points`);
  // Everything inside the frame; it spans the whole width (Russia and Fiji touch ±180°).
  assert.ok(numbers.every(([x, y]) => x! >= 0 && x! <= 960 && y! >= 0 && y! <= 480));
  assert.equal(Math.min(...numbers.map(([x]) => x!)), 0);
  assert.equal(Math.max(...numbers.map(([x]) => x!)), 960);
  // Antarctica reaches the bottom edge (−90°); nothing is north of about 84° N (y ≈ 16).
  assert.equal(Math.max(...numbers.map(([, y]) => y!)), 480);
  assert.ok(Math.min(...numbers.map(([, y]) => y!)) > 10);
});

Deno.test("HEAD / for a browser answers the page's headers with its length", async () => {
  const head = await site.request("/", { method: "HEAD", headers: { accept: BROWSER_ACCEPT } });
  const html = await (await get("/", { accept: BROWSER_ACCEPT })).arrayBuffer();
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), String(html.byteLength));
});

Deno.test("the page asks for the risk group with what it shows, in one request, and has rows for it", async () => {
  const html = await (await get("/", { accept: BROWSER_ACCEPT })).text();
  // The reason and the lists come right under the verdict.
  assert.match(html, /id="d-verdict"[^]*?id="d-reason"[^]*?id="d-matches"/);
  const url = (await assetUrls()).find((u) => u.includes("/app."))!;
  const query = /"(\?get=[^"]+)"/.exec(await (await get(url)).text())?.[1];
  assert.ok(query, "the script names the fields it asks for");

  // That query, for an address on two lists: every group the page shows, and why.
  const { dataDir, sources } = await writeListedDataDir();
  try {
    const listed = await app(undefined, await openDataSet(dataDir, { configured: sources }));
    const response = await listed.request(`/ip/${LISTED}${query}`);
    assert.equal(response.status, 200);
    const { data } = await response.json();
    for (const group of ["geoLocation", "timezone", "currency", "connection", "userAgent"]) {
      assert.ok(group in data, group);
    }
    assert.equal(data.security.isThreat, "high");
    assert.equal(data.risk.reason, "high: Tor exit (tor-exits); on a threat list (blocklist)");
    assert.deepEqual(data.risk.matches, [
      {
        source: "tor-exits",
        kind: "tor",
        network: LISTED,
        dataDate: "2026-11-18T10:00:00.000Z",
        firstSeen: "2026-11-20T06:00:00.000Z", // the update that installed it
        lastSeen: "2026-11-20T06:00:00.000Z",
      },
      {
        source: "blocklist",
        kind: "threat",
        network: "185.241.208.0/24",
        dataDate: "2026-11-20T06:00:00.000Z",
        firstSeen: "2026-11-20T06:00:00.000Z",
        lastSeen: "2026-11-20T06:00:00.000Z",
      },
    ]);
    // /me takes the same query.
    const me = await listed.request(`/me${query}`, {}, peer(LISTED) as unknown as undefined);
    assert.equal((await me.json()).data.risk.matches.length, 2);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
