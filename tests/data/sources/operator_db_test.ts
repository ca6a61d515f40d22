import assert from "node:assert/strict";
import { openServed } from "../../../src/process/server/served.ts";
import { loadConfig } from "../../../src/base/config.ts";
import { type MmdbValue, MmdbWriter, uint32 } from "../../../src/data/mmdb/writer/writer.ts";
import { writeBaseDataDir } from "../update/_feed_server.ts";
import { fixtureApp } from "../../_helpers.ts";

// Fixtures in MaxMind's exact record layouts (GeoIP2 ISP, Domain, Connection-Type, Anonymous-IP).
const DATABASES: Record<
  string,
  { type: string; records: Record<string, Record<string, MmdbValue>> }
> = {
  IPINTEL_ISP_DB: {
    type: "GeoIP2-ISP",
    records: {
      "1.128.0.0/11": {
        autonomous_system_number: uint32(1221),
        autonomous_system_organization: "Telstra Pty Ltd",
        isp: "Telstra Internet",
        organization: "Telstra Internet",
        mobile_country_code: "505",
        mobile_network_code: "01",
      },
      "2001:db8:1::/48": { isp: "Example ISP", organization: "Example Org" },
    },
  },
  IPINTEL_DOMAIN_DB: {
    type: "GeoIP2-Domain",
    records: { "1.2.0.0/16": { domain: "maxmind.com" } },
  },
  IPINTEL_CONNECTION_TYPE_DB: {
    type: "GeoIP2-Connection-Type",
    records: {
      "1.0.0.0/24": { connection_type: "Cable/DSL" },
      "1.128.0.0/11": { connection_type: "Cellular" },
    },
  },
  IPINTEL_ANONYMOUS_IP_DB: {
    type: "GeoIP2-Anonymous-IP",
    records: {
      "1.2.0.0/16": { is_anonymous: true, is_anonymous_vpn: true },
      "81.2.69.0/24": {
        is_anonymous: true,
        is_anonymous_vpn: true,
        is_hosting_provider: true,
        is_public_proxy: true,
        is_residential_proxy: true,
        is_tor_exit_node: true,
      },
      "186.30.236.0/24": { is_anonymous: true, is_residential_proxy: true },
      "65.0.0.0/13": { is_hosting_provider: true },
    },
  },
};

async function writeDatabases(dir: string, only?: string[]) {
  const env: Record<string, string> = {};
  for (const [variable, { type, records }] of Object.entries(DATABASES)) {
    if (only && !only.includes(variable)) continue;
    const writer = new MmdbWriter({ databaseType: type, buildEpoch: 1_760_000_000 });
    for (const [network, record] of Object.entries(records)) writer.insertNetwork(network, record);
    const path = `${dir}/${type}.mmdb`;
    await Deno.writeFile(path, writer.toBytes());
    env[variable] = path;
  }
  return env;
}

async function lookupWith(env: Record<string, string>, dataDir: string) {
  const config = loadConfig({
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_SOURCES: `${dataDir}/s.json`,
    ...env,
  });
  await Deno.writeTextFile(`${dataDir}/s.json`, '{"sources":[]}');
  return await openServed(config);
}

Deno.test("operators' ISP, Domain and Connection-Type databases fill connection", async () => {
  const dir = await writeBaseDataDir();
  try {
    const { lookup } = await lookupWith(await writeDatabases(dir), dir);
    assert.deepEqual(lookup.find("1.128.0.1").connection, {
      asn_number: 64500, // the ASN database wins where it knows the address
      asn_org: "Test network",
      isp: "Telstra Internet",
      org: "Telstra Internet",
      domain: null,
      connection_type: "Cellular",
    });
    assert.deepEqual(lookup.find("1.2.3.4").connection, {
      asn_number: 64500,
      asn_org: "Test network",
      isp: "Test network", // no ISP record: falls back to the AS organisation
      org: "Test network",
      domain: "maxmind.com",
      connection_type: null,
    });
    assert.equal(lookup.find("1.0.0.1").connection.connection_type, "Cable/DSL");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an operator's ISP database gives the ASN where no ASN database is loaded", async () => {
  const dir = await writeBaseDataDir();
  try {
    const env = await writeDatabases(dir, ["IPINTEL_ISP_DB"]);
    // The operator's own "ASN" database is the ISP file's AS-less twin: none for 1.128/11.
    const asn = new MmdbWriter({ databaseType: "GeoLite2-ASN" });
    asn.insertNetwork("9.9.9.0/24", { autonomous_system_number: 19281 });
    await Deno.writeFile(`${dir}/other-asn.mmdb`, asn.toBytes());
    const { lookup } = await lookupWith({ ...env, IPINTEL_ASN_DB: `${dir}/other-asn.mmdb` }, dir);
    const c = lookup.find("1.128.0.1").connection;
    assert.equal(c.asn_number, 1221);
    assert.equal(c.asn_org, "Telstra Pty Ltd");
    assert.equal(c.isp, "Telstra Internet");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an operator's Anonymous-IP database sets isVpn, isTor and hosting", async () => {
  const dir = await writeBaseDataDir();
  try {
    const env = await writeDatabases(dir, ["IPINTEL_ANONYMOUS_IP_DB"]);
    const { lookup } = await lookupWith(env, dir);
    const cases: [string, object][] = [
      ["81.2.69.142", { isVpn: true, isTor: true, isThreat: "high" }],
      ["1.2.3.4", { isVpn: true, isTor: false, isThreat: "medium" }],
      ["186.30.236.5", { isVpn: true, isTor: false, isThreat: "medium" }], // residential proxy
      ["65.0.0.1", { isVpn: false, isTor: false, isThreat: "medium" }], // hosting provider
      ["8.8.8.8", { isVpn: false, isTor: false, isThreat: "low" }], // loaded, says no
    ];
    for (const [ip, security] of cases) assert.deepEqual(lookup.find(ip).security, security, ip);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an operator's database of the wrong kind is refused, naming the variable", async () => {
  const dir = await writeBaseDataDir();
  try {
    const env = await writeDatabases(dir, ["IPINTEL_DOMAIN_DB"]);
    await assert.rejects(
      lookupWith({ IPINTEL_ISP_DB: env.IPINTEL_DOMAIN_DB! }, dir),
      /^Error: Invalid IPINTEL_ISP_DB ".*GeoIP2-Domain\.mmdb": database_type "GeoIP2-Domain" is not a database of kind "isp"/,
    );
    await Deno.writeTextFile(`${dir}/junk.mmdb`, "junk");
    await assert.rejects(
      lookupWith({ IPINTEL_CITY_DB: `${dir}/junk.mmdb` }, dir),
      /Invalid IPINTEL_CITY_DB ".*junk\.mmdb": Not a valid MaxMind DB/,
    );
    await assert.rejects(
      lookupWith({ IPINTEL_ASN_DB: `${dir}/missing.mmdb` }, dir),
      /Invalid IPINTEL_ASN_DB ".*missing\.mmdb": No such file/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /status lists each source's data date, age, count, licence, and absent feeds", async () => {
  const dir = await writeBaseDataDir();
  try {
    const env = await writeDatabases(dir, ["IPINTEL_ISP_DB"]);
    const config = loadConfig({
      IPINTEL_DATA_DIR: dir,
      IPINTEL_SOURCES: `${dir}/s.json`,
      ...env,
    });
    await Deno.writeTextFile(
      `${dir}/s.json`,
      JSON.stringify({
        sources: [{
          name: "tor-exits",
          kind: "tor",
          format: "ip-list",
          url: "https://check.torproject.org/torbulkexitlist",
          license: "CC0",
          attribution: "The Tor Project",
        }],
      }),
    );
    const services = { current: await openServed(config) };
    const app = await fixtureApp({ slot: services, config: { bulkMax: 1 } });
    const res = await app.request("/status");
    assert.equal(res.status, 200);
    const { data } = await res.json();
    assert.equal(data.version, JSON.parse(await Deno.readTextFile("deno.json")).version);
    assert.equal(typeof data.uptimeSeconds, "number");
    const [asn, isp, tor] = data.sources;
    assert.equal(asn.name, "test-asn");
    assert.equal(asn.dataDate, "2023-11-14T22:13:20.000Z", "the database's own build epoch");
    assert.equal(asn.ageDays, Math.floor((Date.now() - Date.parse(asn.dataDate)) / 86_400_000));
    assert.equal(asn.count, 2, "::/0 and 0.0.0.0/0");
    assert.equal(isp.name, "IPINTEL_ISP_DB");
    assert.equal(isp.kind, "isp");
    assert.equal(isp.databaseType, "GeoIP2-ISP");
    assert.equal(isp.dataDate, new Date(1_760_000_000_000).toISOString());
    assert.equal(isp.count, 2);
    assert.deepEqual(tor, {
      name: "tor-exits",
      kind: "tor",
      status: "absent",
      reason:
        'Not installed yet: the server\'s scheduled update fetches it, or "deno task ipintel data update"',
    });
    const none = await fixtureApp({ slot: { current: null }, config: { bulkMax: 1 } });
    assert.equal((await none.request("/status")).status, 503);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
