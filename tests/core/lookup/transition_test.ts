/**
 * IPv6 transition ranges (docs/decisions.md, "IPv6 transition ranges"): a 6to4
 * (2002::/16) or Teredo (2001::/32) address is answered, by every source, for the IPv4
 * address it embeds (6to4: bits 16–47; Teredo: bits 32–63, the Teredo server).
 */

import assert from "node:assert/strict";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { DEFAULT_DATA_DIR, defaultDataFile, FIXED_NOW, fixtureApp } from "../../_helpers.ts";
import { mmdblookup, mmdblookupAvailable } from "../../_mmdblookup.ts";

const app = await fixtureApp();

async function data(path: string) {
  const response = await app.request(path);
  return { status: response.status, body: await response.json() };
}

/** The same answer as for `v4`, except the echoed address. */
async function assertSameAs(ip: string, v4: string) {
  const got = await data(`/ip/${ip}`);
  const want = await data(`/ip/${v4}`);
  assert.equal(got.status, want.status, ip);
  assert.equal(got.body.data.ip, ip);
  assert.deepEqual({ ...got.body.data, ip: v4 }, want.body.data, ip);
}

Deno.test("API: a 6to4 address answers like the IPv4 address in its bits 16-47", async () => {
  await assertSameAs("2002:5102:4501::1", "81.2.69.1"); // City and ASN: London, AS20712
  await assertSameAs("2002:909:909:abcd::", "9.9.9.9"); // ASN only: Quad9
  const { body } = await data("/ip/2002:5102:4501::1");
  assert.equal(body.data.geoLocation.city, "London");
  assert.equal(body.data.connection.asn_number, 20712);
  // Not in any source: 404 naming the 6to4 range, like the IPv4 address.
  const missing = await data("/ip/2002:505:505::");
  assert.equal(missing.status, 404);
  assert.match(missing.body.error?.message ?? JSON.stringify(missing.body), /6to4/);
});

Deno.test("API: a Teredo address answers like its server's IPv4 address (bits 32-63)", async () => {
  // Client 192.0.2.45:40000 behind Teredo server 81.2.69.1 (RFC 4380 layout).
  await assertSameAs("2001:0:5102:4501:8000:63bf:3fff:fdd2", "81.2.69.1");
  await assertSameAs("2001:0:909:909::", "9.9.9.9");
  // 2001:1::/32 is not Teredo: only the IPv6 tree is asked (nothing there).
  assert.equal((await data("/ip/2001:1:5102:4501::")).status, 404);
});

const realAvailable = await Deno.stat(`${DEFAULT_DATA_DIR}/manifest.json`).then(
  () => true,
  () => false,
);

Deno.test({
  name:
    "real data: 6to4 and Teredo of 8.8.8.8 get 8.8.8.8's city and network, as libmaxminddb reads City",
  ignore: !realAvailable,
  fn: async () => {
    const lookup = createLookup({
      data: await openDataSet(DEFAULT_DATA_DIR),
      now: () => FIXED_NOW,
      parseUserAgent: createUserAgentParser(),
    });
    const base = lookup.find("8.8.8.8");
    assert.equal(base.connection.asn_number, 15169);
    for (const ip of ["2002:808:808::1", "2001:0:808:808:8000:63bf:3fff:fdd2"]) {
      const got = lookup.find(ip);
      assert.deepEqual({ ...got, ip: "8.8.8.8" }, base, ip);
      if (mmdblookupAvailable()) {
        // GeoLite2-City, written by MaxMind, aliases these ranges itself.
        const country = await mmdblookup(defaultDataFile("city"), ip, [
          "country",
          "iso_code",
        ]);
        assert.equal(country, got.geoLocation.countryCode, ip);
      }
    }
  },
});
