/**
 * End to end through the API: real feed fixtures served locally, installed by
 * `data update`, answered by the HTTP app. A Tor exit, a VPN range, a cloud
 * range, a Private Relay egress and a DROP network each answer the right
 * `security` flags and the right `risk.matches`; the operator's allow-list
 * clears flags and the operator's geofeed places its own networks.
 */

import assert from "node:assert/strict";
import { fixtureApp, writeFixtureDataDir } from "../../_helpers.ts";
import { type DataSet, openDataSet } from "../../../src/data/sources/data_set.ts";
import { parseSourcesFile, type SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { RISK_LAYOUT } from "../../../src/base/types.ts";
import {
  type FeedServer,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../update/_feed_server.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
const UPDATED = new Date("2026-11-20T06:00:00Z");

/** Sources as an operator writes them (licence and attribution left out: "not stated"). */
function sources(server: FeedServer, list: Record<string, unknown>[]): SourceSpec[] {
  return parseSourcesFile(
    { sources: list.map((s) => ({ ...s, url: server.url(`/${s.name}`) })) },
    "test sources",
  ).sources;
}

function appOver(data: DataSet) {
  return fixtureApp({ data });
}

/** Installs `list` (each served from its fixture file or text) into `dataDir`; opens the set. */
async function install(
  dataDir: string,
  list: (Record<string, unknown> & {
    name: string;
    body: string | Uint8Array;
    lastModified?: string;
  })[],
): Promise<DataSet> {
  const server = startFeedServer();
  try {
    for (const { name, body, lastModified } of list) {
      const text = typeof body === "string" && body.startsWith("file:")
        ? await Deno.readFile(`${FIXTURES}${body.slice(5)}`)
        : body;
      server.routes.set(`/${name}`, { body: text, lastModified });
    }
    const specs = sources(
      server,
      list.map(({ body: _b, lastModified: _l, ...spec }) => spec),
    );
    const { outcomes } = await update(dataDir, specs, { now: () => UPDATED });
    assert.ok(outcomes.every((o) => o.status === "updated"), JSON.stringify(outcomes));
    return await openDataSet(dataDir, { configured: specs });
  } finally {
    await server.close();
  }
}

const FEEDS = [
  {
    name: "tor-exits",
    kind: "tor",
    format: "ip-list",
    body: "file:tor_bulk_exit_list.txt",
    lastModified: "Wed, 18 Nov 2026 10:00:00 GMT",
  },
  { name: "x4bnet-vpn-ipv4", kind: "vpn", format: "ip-list", body: "file:x4bnet_vpn_ipv4.txt" },
  {
    name: "aws",
    kind: "hosting",
    format: "aws-json",
    provider: "Amazon Web Services",
    body: "file:aws_ip-ranges.json",
  },
  {
    name: "cloudflare-ipv4",
    kind: "hosting",
    format: "ip-list",
    provider: "Cloudflare",
    body: "file:cloudflare_ips-v4.txt",
  },
  {
    name: "icloud-private-relay",
    kind: "relay",
    format: "geofeed",
    provider: "Apple iCloud Private Relay",
    body: "file:icloud_private_relay_egress-ip-ranges.csv",
  },
  // A VPN list that also names a relay egress range (X4BNet's full list does).
  { name: "other-vpn", kind: "vpn", format: "ip-list", body: "172.224.226.0/24\n" },
  {
    name: "spamhaus-drop-v4",
    kind: "threat",
    format: "drop-json",
    body: "file:spamhaus_drop_v4.jsonl",
  },
  { name: "spamhaus-drop-v6", kind: "threat", format: "ip-list", body: "file:spamhaus_dropv6.txt" },
  { name: "firehol-level1", kind: "threat", format: "ip-list", body: "file:firehol_level1.netset" },
  { name: "office", kind: "allow", format: "ip-list", body: "# our VPN\n2.26.164.0/24\n" },
];

async function get(app: Awaited<ReturnType<typeof appOver>>, path: string) {
  const response = await app.request(path);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return text;
}

Deno.test("security and risk through the API for a Tor exit, VPN, cloud, relay and DROP address", async () => {
  const dataDir = await writeBaseDataDir();
  try {
    const app = await appOver(await install(dataDir, FEEDS));
    const answer = async (ip: string) =>
      JSON.parse(await get(app, `/ip/${ip}?get=security,risk`)).data;
    const downloaded = UPDATED.toISOString();

    const tor = await answer("185.241.208.232");
    assert.deepEqual(tor.security, { isVpn: false, isTor: true, isThreat: "high" });
    assert.deepEqual(tor.risk, {
      anonymizer: "tor",
      abuse: null,
      provider: null,
      crawler: null,
      matches: [{
        source: "tor-exits",
        kind: "tor",
        network: "185.241.208.232",
        dataDate: "2026-11-18T10:00:00.000Z", // the server's Last-Modified
        firstSeen: downloaded,
        lastSeen: downloaded,
      }],
      reason: "high: Tor exit (tor-exits)",
      asOf: null,
    });
    // Keys in the layout's order (the OpenAPI Risk schema is derived from it).
    assert.deepEqual(Object.keys(tor.risk), Object.keys(RISK_LAYOUT));
    assert.deepEqual(Object.keys(tor.risk.matches[0]), Object.keys(RISK_LAYOUT.matches.items));

    const vpn = await answer("2.26.157.77");
    assert.deepEqual(vpn.security, { isVpn: true, isTor: false, isThreat: "medium" });
    assert.equal(vpn.risk.anonymizer, "vpn");
    assert.deepEqual(vpn.risk.matches, [
      {
        source: "x4bnet-vpn-ipv4",
        kind: "vpn",
        network: "2.26.157.0/24",
        dataDate: downloaded,
        firstSeen: downloaded,
        lastSeen: downloaded,
      },
    ]);
    assert.equal(vpn.risk.reason, "medium: VPN network (x4bnet-vpn-ipv4)");

    const cloud = await answer("3.5.140.9");
    assert.deepEqual(cloud.security, { isVpn: false, isTor: false, isThreat: "medium" });
    assert.equal(cloud.risk.anonymizer, "hosting");
    assert.equal(cloud.risk.provider, "Amazon Web Services");
    assert.deepEqual(cloud.risk.matches, [
      {
        source: "aws",
        kind: "hosting",
        network: "3.5.140.0/22",
        dataDate: "2021-08-17T11:31:16.000Z",
        firstSeen: downloaded,
        lastSeen: downloaded,
      },
    ]);
    assert.equal(cloud.risk.reason, "medium: hosting network of Amazon Web Services (aws)");
    const cf = await answer("173.245.48.1");
    assert.equal(cf.risk.provider, "Cloudflare");

    // A relay egress also on a VPN list: the relay wins (isVpn false, low), both are shown.
    const relay = await answer("172.224.226.5");
    assert.deepEqual(relay.security, { isVpn: false, isTor: false, isThreat: "low" });
    assert.equal(relay.risk.anonymizer, "relay");
    assert.equal(relay.risk.provider, "Apple iCloud Private Relay");
    assert.deepEqual(relay.risk.matches, [
      {
        source: "other-vpn",
        kind: "vpn",
        network: "172.224.226.0/24",
        dataDate: downloaded,
        firstSeen: downloaded,
        lastSeen: downloaded,
      },
      {
        source: "icloud-private-relay",
        kind: "relay",
        network: "172.224.226.0/27",
        dataDate: downloaded, // Apple's file states no date: the download's
        firstSeen: downloaded,
        lastSeen: downloaded,
      },
    ]);
    assert.match(
      relay.risk.reason,
      /^low: Apple iCloud Private Relay egress \(icloud-private-relay\)/,
    );

    // A DROP network that FireHOL level 1 lists too: every list is named, with its date.
    const drop = await answer("1.10.16.200");
    assert.deepEqual(drop.security, { isVpn: false, isTor: false, isThreat: "high" });
    assert.equal(drop.risk.abuse, "listed");
    assert.equal(drop.risk.anonymizer, null);
    assert.deepEqual(
      drop.risk.matches.toSorted((a: { source: string }, b: { source: string }) =>
        a.source.localeCompare(b.source)
      ),
      [
        {
          source: "firehol-level1",
          kind: "threat",
          network: "1.10.16.0/20",
          dataDate: "2015-11-13T17:18:59.000Z",
          firstSeen: downloaded,
          lastSeen: downloaded,
        },
        {
          source: "spamhaus-drop-v4",
          kind: "threat",
          network: "1.10.16.0/20",
          dataDate: "2026-07-23T09:14:02.000Z",
          firstSeen: downloaded,
          lastSeen: downloaded,
        },
      ],
    );
    assert.match(drop.risk.reason, /^high: on a threat list \((spamhaus-drop-v4|firehol-level1), /);
    const dropv6 = await answer("2a0b:4ec0::1");
    assert.deepEqual(dropv6.risk.matches, [{
      source: "spamhaus-drop-v6",
      kind: "threat",
      network: "2a0b:4ec0::/29",
      dataDate: "2025-01-08T22:38:36.000Z",
      firstSeen: downloaded,
      lastSeen: downloaded,
    }]);

    // Nothing lists it: low, no matches; no `risk` at all unless asked for.
    const clean = await answer("198.51.100.7");
    assert.deepEqual(clean.security, { isVpn: false, isTor: false, isThreat: "low" });
    assert.deepEqual(clean.risk.matches, []);
    assert.equal(clean.risk.reason, "low: none of the installed security sources lists it");
    const plain = JSON.parse(await get(app, "/ip/185.241.208.232")).data;
    assert.equal("risk" in plain, false);
    assert.deepEqual(plain.security, tor.security);
    const leaf = JSON.parse(await get(app, "/ip/185.241.208.232?get=isThreat,reason")).data;
    assert.deepEqual(leaf, { ip: "185.241.208.232", isThreat: "high", reason: tor.risk.reason });

    // The operator's allow-list clears the flags of a VPN range it names.
    const office = await answer("2.26.164.10");
    assert.deepEqual(office.security, { isVpn: false, isTor: false, isThreat: "low" });
    assert.equal(office.risk.anonymizer, null);
    assert.deepEqual(office.risk.matches.map((m: { source: string }) => m.source), [
      "x4bnet-vpn-ipv4",
      "office",
    ]);
    assert.equal(office.risk.reason, "low: on the operator's allow-list (office)");

    // XML, CSV and bulk carry the same group.
    const xml = await get(app, "/ip/1.10.16.200?get=risk&format=xml");
    assert.match(
      xml,
      /<risk><anonymizer\/><abuse>listed<\/abuse><provider\/><crawler\/><matches><item><source>/,
    );
    const csv = await get(app, "/ip/3.5.140.9?get=risk.provider,risk.matches&format=csv");
    const [header, row] = csv.split("\r\n");
    assert.equal(header, "ip,risk.provider,risk.matches");
    assert.match(row!, /^3\.5\.140\.9,Amazon Web Services,"\[\{""source"":""aws""/);
    const bulk = JSON.parse(await get(app, "/bulk/185.241.208.232,3.5.140.9?get=anonymizer"));
    assert.deepEqual(bulk.data.responseArray, [
      { ip: "185.241.208.232", anonymizer: "tor" },
      { ip: "3.5.140.9", anonymizer: "hosting" },
    ]);

    // Sources without licence or attribution are shown as "not stated".
    const status = JSON.parse(await get(app, "/status")).data;
    const office_ = status.sources.find((s: { name: string }) => s.name === "office");
    assert.equal(office_.license, "not stated");
    assert.equal(office_.attribution, "not stated");
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("the operator's geofeed places its networks ahead of the City database, private ranges included", async () => {
  const dataDir = await writeFixtureDataDir();
  try {
    const geofeed = [
      "# our networks (RFC 8805)",
      "192.168.10.0/24,DE,DE-BE,Berlin,10115",
      "2a02:ec0:1::/48,DE,DE-BE,Berlin-Mitte,10117",
      "81.2.69.0/25,GB,GB-SCT,Edinburgh,EH1",
      "10.1.0.0/16,FR,,Lyon,",
    ].join("\n");
    // An update installs exactly its sources: the fixture databases are sources too.
    const database = async (kind: "city" | "asn") => ({
      name: `fixture-${kind}`,
      kind,
      format: "mmdb",
      body: await Deno.readFile(`${dataDir}/${kind}.mmdb`),
    });
    const app = await appOver(
      await install(dataDir, [await database("city"), await database("asn"), {
        name: "our-geofeed",
        kind: "location",
        format: "geofeed",
        body: geofeed,
      }]),
    );
    const geo = async (ip: string, lang = "en") =>
      JSON.parse(await get(app, `/ip/${ip}?get=geoLocation&lang=${lang}`)).data.geoLocation;

    // A private network the City database does not know at all.
    const office = await geo("192.168.10.5");
    assert.equal(office.country, "Germany");
    assert.equal(office.countryCode, "DE");
    assert.equal(office.regionCode, "BE");
    assert.equal(office.city, "Berlin");
    assert.equal(office.postal_Code, "10115");
    assert.equal(office.is_in_eu, true);
    assert.equal(office.capital, "Berlin");
    assert.equal(office.latitude, null);
    assert.equal((await geo("192.168.10.5", "de")).country, "Deutschland");
    // Same country and region as the database: its names and coordinates stay.
    const mitte = await geo("2a02:ec0:1::5");
    assert.equal(mitte.region, "Land Berlin");
    assert.equal(mitte.city, "Berlin-Mitte");
    assert.equal(mitte.postal_Code, "10117");
    assert.equal(mitte.latitude, 52.5);
    // Another region than the database's: no borrowed region name or coordinates.
    const edinburgh = await geo("81.2.69.5");
    assert.deepEqual(
      [
        edinburgh.country,
        edinburgh.region,
        edinburgh.regionCode,
        edinburgh.city,
        edinburgh.latitude,
      ],
      ["United Kingdom", null, "SCT", "Edinburgh", null],
    );
    // Another country than the database's private-range record.
    const lyon = await geo("10.1.2.3");
    assert.deepEqual([lyon.countryCode, lyon.city, lyon.region], ["FR", "Lyon", null]);
    // Outside the geofeed: the City database as before; unknown private space still 404.
    assert.equal((await geo("81.2.69.200")).city, "London");
    assert.equal((await geo("10.2.0.1")).countryCode, "US");
    assert.equal((await app.request("/ip/192.168.11.1")).status, 404);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
