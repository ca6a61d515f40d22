import assert from "node:assert/strict";
import { createApp } from "../../src/http/app.ts";
import { withFastLookup } from "../../src/http/fast_lookup.ts";
import { CHROME, fixtureDataSet, fixtureLookup, peer } from "../_helpers.ts";

const services = { current: { data: await fixtureDataSet(), lookup: await fixtureLookup() } };
const config = {
  bulkMax: 10,
  trustedProxies: [],
  forwardedHeader: "x-forwarded-for" as const,
  corsOrigins: ["*"],
};
const app = createApp({ services, config, logError: () => {} });
let appCalls = 0;
const fast = withFastLookup(services, config, (request, env) => {
  appCalls++;
  return app.fetch(request, env);
});

/** Status, headers and the body's bytes. */
async function snapshot(response: Response) {
  return {
    status: response.status,
    headers: [...response.headers].filter(([name]) => name !== "content-length").sort(),
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

const CASES: { path: string; headers?: Record<string, string>; fast: boolean }[] = [
  { path: "/ip/81.2.69.142", fast: true },
  { path: "/ip/81.2.69.142", headers: { "user-agent": CHROME }, fast: true },
  { path: "/ip/2a02:ec0::1", fast: true }, // non-ASCII in names: sent as \u escapes
  { path: "/ip/::ffff:81.2.69.142", fast: true },
  { path: "/ip/1.1.1.1", fast: true },
  { path: "/ip/9.9.9.9", fast: true },
  { path: "/ip/1.2.3", fast: false }, // errors are rendered by the app
  { path: "/ip/192.168.0.1", fast: false },
  { path: "/ip/81.2.69.142?get=city", fast: true },
  { path: "/ip/81.2.69.142?get=ip,geoLocation.country,geoLocation.city,security", fast: true },
  {
    path: "/ip/2a02:ec0::1?get=flag,currency.symbol,CITY",
    headers: { "user-agent": CHROME },
    fast: true,
  },
  { path: "/ip/81.2.69.142?get=browser,os.name", fast: false }, // unknown name: 400 by the app
  { path: "/ip/81.2.69.142?get=nope", fast: false },
  { path: "/ip/1.2.3?get=city", fast: false },
  { path: "/ip/81.2.69.142?get=", fast: false },
  { path: "/ip/81.2.69.142?get=,", fast: true }, // no names: the whole result
  { path: "/ip/81.2.69.142?get=city,,country", fast: true },
  { path: "/ip/81.2.69.142?get=city%2Ccountry", fast: false },
  { path: "/ip/81.2.69.142?get=city+country", fast: false },
  { path: "/ip/81.2.69.142?get=city&get=country", fast: false },
  { path: "/ip/81.2.69.142?GET=city", fast: false },
  { path: "/ip/81.2.69.142?format=xml", fast: true },
  { path: "/ip/81.2.69.142?format=csv", fast: true },
  { path: "/ip/81.2.69.142?format=xml", headers: { "user-agent": CHROME }, fast: true },
  { path: "/ip/2a02:ec0::1?format=xml", fast: true }, // non-ASCII in names
  { path: "/ip/2a02:ec0::1?format=csv", fast: true },
  { path: "/ip/::ffff:81.2.69.142?format=csv", headers: { "user-agent": CHROME }, fast: true },
  { path: "/ip/1.1.1.1?format=xml", fast: true },
  { path: "/ip/9.9.9.9?format=csv", fast: true },
  { path: "/ip/1.2.3?format=xml", fast: false }, // errors in XML, by the app
  { path: "/ip/192.168.0.1?format=csv", fast: false },
  // format, get and lang in any order and combination, each once.
  { path: "/ip/81.2.69.142?format=json", fast: true },
  { path: "/ip/81.2.69.142?format=csv&get=city", fast: true },
  { path: "/ip/81.2.69.142?get=security,risk", fast: true }, // the opt-in group, computed
  { path: "/ip/81.2.69.142?get=reason&format=xml", fast: true },
  { path: "/ip/81.2.69.142?get=city&format=xml", fast: true },
  { path: "/ip/81.2.69.142?format=xml&lang=de", fast: true },
  { path: "/ip/81.2.69.142?lang=de", fast: true },
  { path: "/ip/81.2.69.142?lang=ja-JP&get=city,country", fast: true },
  { path: "/ip/81.2.69.142?lang=pt-BR", fast: false }, // not in the database: 400 by the app
  { path: "/ip/2a02:ec0::1?lang=ja&format=csv", fast: true },
  { path: "/ip/81.2.69.142?lang=de_DE", fast: true },
  { path: "/ip/81.2.69.142?lang=DE&format=json&get=city", fast: true },
  { path: "/ip/81.2.69.142?lang=xx", fast: false }, // unsupported: 400 by the app
  { path: "/ip/1.2.3?lang=de", fast: false },
  { path: "/ip/81.2.69.142?lang=", fast: false },
  { path: "/ip/81.2.69.142?lang=de&lang=fr", fast: false },
  { path: "/ip/81.2.69.142?lang=de%2Dde", fast: false },
  // Any other query is the app's: spelling, case, other or repeated parameters, encoding.
  { path: "/ip/81.2.69.142?format=XML", fast: false },
  { path: "/ip/81.2.69.142?format=xml&format=csv", fast: false },
  { path: "/ip/81.2.69.142?constructor=x", fast: false },
  { path: "/ip/81.2.69.142?=xml", fast: false },
  { path: "/ip/81.2.69.142?format", fast: false },
  { path: "/ip/81.2.69.142?format=xml&ua=curl/8", fast: false },
  { path: "/ip/81.2.69.142?format=xml&apiKey=x", fast: false },
  { path: "/ip/81.2.69.142?format=%78ml", fast: false },
  { path: "/ip/81.2.69.142?format=xml&", fast: false },
  { path: "/ip/81.2.69.142?format=xml#top", fast: false },
  { path: "/ip/81.2.69.142?", fast: false },
  { path: "/ip/81.2.69.142?format=", fast: false },
  { path: "/ip/81.2.69.142?format=xml?", fast: false },
  { path: "/ip/?format=xml", fast: false },
  { path: "/ip/1.2.3.0/24?format=xml", fast: false },
  { path: "/ip/2a02%3Aec0%3A%3A1", fast: false },
  { path: "/ip/1.2.3.0/24", fast: false },
  { path: "/bulk/81.2.69.142", fast: false },
];

Deno.test("the fast path answers plain GET /ip/{ip} (and plain format, get, lang) exactly as the app does", async () => {
  for (const { path, headers, fast: expectFast } of CASES) {
    const request = () => new Request(`http://localhost${path}`, { headers });
    appCalls = 0;
    const viaFast = await snapshot(await fast(request(), peer("127.0.0.1")));
    assert.equal(appCalls === 0, expectFast, `${path}: fast path taken?`);
    const viaApp = await snapshot(await app.fetch(request(), peer("127.0.0.1")));
    assert.deepEqual(viaFast, viaApp, path);
  }
});

Deno.test("the fast path writes non-ASCII as JSON escapes that parse back to the same text", async () => {
  const response = await fast(new Request("http://localhost/ip/81.2.69.142"), peer("127.0.0.1"));
  const text = await response.text();
  assert.ok(/^[\x20-\x7e]*$/.test(text), "body is printable ASCII");
  assert.ok(text.includes("\\ud83c\\uddec\\ud83c\\udde7"), "the flag is escaped");
  assert.equal(JSON.parse(text).data.flag.flag_Icon, "🇬🇧");
});

Deno.test("the fast path steps aside for CORS origin lists and while data loads", async () => {
  const strictConfig = { ...config, corsOrigins: ["https://app.example"] };
  const handler = (request: Request) => app.fetch(request);
  assert.equal(withFastLookup(services, strictConfig, handler), handler);
  const loading = withFastLookup({ current: null }, config, (request, env) => {
    appCalls++;
    return app.fetch(request, env);
  });
  appCalls = 0;
  await loading(new Request("http://localhost/ip/81.2.69.142"), peer("127.0.0.1"));
  assert.equal(appCalls, 1);
});
