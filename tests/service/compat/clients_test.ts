/**
 * The compatible APIs driven by the vendors' own clients, unchanged, against
 * `ipintel serve` over HTTPS with a certificate made at test time: MaxMind's
 * `@maxmind/geoip2-node` (WebServiceClient, `host`), Debian's python3-geoip2
 * web-service client (`host`, REQUESTS_CA_BUNDLE), and ipinfo's `node-ipinfo`
 * (`baseUrl`, in a subprocess trusting the CA through NODE_EXTRA_CA_CERTS).
 * Each answer is compared with ipintel's native `/ip` answer and with
 * libmaxminddb's `mmdblookup` on the same database file, and each client's
 * error classes are checked: invalid, reserved, not found, bad key, limit.
 */

import assert from "node:assert/strict";
import { WebServiceClient, type WebServiceError } from "@maxmind/geoip2-node";
import { formatNetwork } from "../../../src/base/ip/cidr.ts";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { DEFAULT_DATA_DIR, defaultDataFile } from "../../_helpers.ts";
import {
  mmdblookup,
  MMDBLOOKUP_MISSING,
  mmdblookupAvailable,
  runMmdblookup,
} from "../../_mmdblookup.ts";
import { pythonWith } from "../../_python.ts";
import { ignoredName } from "../../_skip.ts";
import { startServe } from "../../_serve_process.ts";
import { makeCertificates, trustingFetch } from "./_tls.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const CITY_FILE = defaultDataFile("city");
const ASN_FILE = defaultDataFile("asn");
/** Found in City and ASN (IPv4 and IPv6), one known only by its registered country, one 6to4. */
const FOUND = ["81.2.69.142", "8.8.8.8", "2001:4860:4860::8888", "1.1.1.1", "2a02:ec0::1"];
const RESERVED = "10.0.0.1";
/** Public, but in no database. */
const NOT_FOUND = "2c0f:ffff::1";

/** Runs the CLI (keys) against the KV file; its stdout. */
async function ipintel(kv: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env: { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv, NO_COLOR: "1" },
  }).output();
  if (!output.success) throw new Error(new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout);
}

// deno-lint-ignore no-explicit-any
type Any = any;

/** What the data files say for an address: the City record and the network both databases agree on. */
async function reference(ip: string) {
  const record = (await mmdblookup(CITY_FILE, ip)) as Any;
  // mmdblookup counts IPv4 prefixes in the IPv6 tree (96 + n).
  const prefixOf = async (file: string) => {
    const { value, prefixLength } = await runMmdblookup(file, ip, { verbose: true });
    if (value === null) return 0;
    return ip.includes(":") ? prefixLength! : prefixLength! - 96;
  };
  const prefix = Math.max(await prefixOf(CITY_FILE), await prefixOf(ASN_FILE));
  return { record, network: formatNetwork(parseIp(ip), prefix) };
}

const GEOIP2_PYTHON = await pythonWith("import geoip2.webservice");
const GEOIP2_STEP = ignoredName(
  "python3-geoip2 (Debian): city, country and error classes",
  GEOIP2_PYTHON ? null : "python3-geoip2 is not installed",
);

Deno.test({
  name: ignoredName(
    "MaxMind's, ipinfo's and Debian's Python clients work unchanged against ipintel over HTTPS",
    mmdblookupAvailable() ? null : MMDBLOOKUP_MISSING,
  ),
  ignore: !mmdblookupAvailable(),
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-compat-" });
    const certs = await makeCertificates(dir, "server");
    const kv = `${dir}/ipintel.kv`;
    const key = JSON.parse(await ipintel(kv, "keys", "create", "--name", "client", "--json")).key;
    // Two requests per 10 minutes, shared by every API the key is used with.
    const tight = JSON.parse(
      await ipintel(
        kv,
        "keys",
        "create",
        "--name",
        "tight",
        "--limit",
        "2",
        "--window",
        "600",
        "--json",
      ),
    ).key;
    const server = await startServe({
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_KV: kv,
      IPINTEL_TLS_CERT: certs.certFile,
      IPINTEL_TLS_KEY: certs.keyFile,
    });
    const host = `localhost:${server.port}`;
    const trusted = trustingFetch(certs.caPem);
    const native = async (ip: string) => {
      const response = await trusted.fetch(`https://${host}/ip/${ip}`, {
        headers: { "x-api-key": key },
      });
      return (await response.json()).data;
    };
    try {
      await t.step("@maxmind/geoip2-node: city, country and insights", async () => {
        const client = new WebServiceClient("42", key, { host, fetcher: trusted.fetch });
        for (const ip of FOUND) {
          const [city, country, insights] = [
            await client.city(ip),
            await client.country(ip),
            await client.insights(ip),
          ];
          const ours = await native(ip);
          const { record, network } = await reference(ip);
          // The client's parsed answer against ipintel's native answer.
          const iso = city.country?.isoCode ?? city.registeredCountry?.isoCode ?? null;
          assert.equal(iso, ours.geoLocation.countryCode, ip);
          assert.equal(city.city?.names.en ?? null, ours.geoLocation.city, ip);
          assert.equal(city.location?.latitude ?? null, ours.geoLocation.latitude, ip);
          assert.equal(city.location?.longitude ?? null, ours.geoLocation.longitude, ip);
          assert.equal(city.subdivisions?.[0]?.isoCode ?? null, ours.geoLocation.regionCode, ip);
          assert.equal(city.traits.autonomousSystemNumber ?? null, ours.connection.asn_number, ip);
          assert.equal(city.traits.autonomousSystemOrganization ?? null, ours.connection.asn_org);
          assert.equal(city.traits.ipAddress, ours.ip);
          assert.equal(city.country?.isInEuropeanUnion ?? false, ours.geoLocation.is_in_eu, ip);
          // ... and against libmaxminddb on the same file: every language's names, the network.
          assert.deepEqual(city.country?.names, record.country?.names, ip);
          assert.deepEqual(city.city?.names, record.city?.names, ip);
          assert.deepEqual(city.continent?.names, record.continent?.names, ip);
          assert.deepEqual(city.registeredCountry?.names, record.registered_country?.names, ip);
          assert.deepEqual(
            city.subdivisions?.map((s) => s.names),
            record.subdivisions?.map((s: Any) => s.names),
            ip,
          );
          assert.equal(city.location?.timeZone, record.location?.time_zone, ip);
          assert.equal(city.location?.accuracyRadius, record.location?.accuracy_radius, ip);
          assert.equal(city.postal?.code, record.postal?.code, ip);
          assert.equal(city.traits.network, network, ip);
          // Country: no city or location; Insights: City's fields and the anonymizer flags.
          assert.deepEqual(country.country, city.country);
          assert.equal((country as Any).city, undefined);
          assert.equal(country.traits.network, network);
          assert.deepEqual(insights.city, city.city);
          assert.equal(insights.traits.isAnonymous, false); // no security source installed
          assert.equal(insights.traits.isTorExitNode, false);
        }
        // A key's remaining requests come back as maxmind.queries_remaining.
        assert.equal(typeof (await client.city("8.8.8.8")).maxmind?.queriesRemaining, "number");
      });

      await t.step("@maxmind/geoip2-node: error classes", async () => {
        const client = new WebServiceClient("42", key, { host, fetcher: trusted.fetch });
        const code = async (call: Promise<unknown>) => {
          try {
            await call;
          } catch (error) {
            return `${(error as WebServiceError).code} ${(error as WebServiceError).status ?? "-"}`;
          }
          return "no error";
        };
        // Refused by the client itself (it validates addresses), and by the server (a zone id).
        assert.equal(await code(client.city("1.2.3")), "IP_ADDRESS_INVALID -");
        assert.equal(await code(client.city("fe80::1%eth0")), "IP_ADDRESS_INVALID 400");
        assert.equal(await code(client.city(RESERVED)), "IP_ADDRESS_RESERVED 400");
        assert.equal(await code(client.insights(NOT_FOUND)), "IP_ADDRESS_NOT_FOUND 404");
        const wrong = new WebServiceClient("42", "not-a-key", { host, fetcher: trusted.fetch });
        assert.equal(await code(wrong.country("8.8.8.8")), "AUTHORIZATION_INVALID 401");
        const limited = new WebServiceClient("42", tight, { host, fetcher: trusted.fetch });
        assert.equal((await limited.country("8.8.8.8")).maxmind?.queriesRemaining, 1);
        await limited.country("8.8.8.8");
        assert.equal(await code(limited.country("8.8.8.8")), "OUT_OF_QUERIES 429");
      });

      await t.step({
        name: GEOIP2_STEP,
        ignore: !GEOIP2_PYTHON,
        fn: async () => {
          const python = GEOIP2_PYTHON!;
          const output = await new Deno.Command(python, {
            args: ["-c", PYTHON_CLIENT, host, key, tight, JSON.stringify(FOUND)],
            env: { REQUESTS_CA_BUNDLE: certs.caFile },
          }).output();
          const stderr = new TextDecoder().decode(output.stderr);
          assert.ok(output.success, stderr);
          const answers = JSON.parse(new TextDecoder().decode(output.stdout));
          for (const ip of FOUND) {
            const got = answers.found[ip];
            const ours = await native(ip);
            const { record, network } = await reference(ip);
            assert.equal(got.country ?? got.registered, ours.geoLocation.countryCode, ip);
            assert.equal(got.city, ours.geoLocation.city, ip);
            assert.equal(got.latitude, ours.geoLocation.latitude, ip);
            assert.equal(got.asn, ours.connection.asn_number, ip);
            assert.equal(got.ip, ours.ip, ip);
            assert.deepEqual(got.country_names, record.country?.names ?? {}, ip);
            assert.equal(got.time_zone, record.location?.time_zone ?? null, ip);
            assert.equal(got.network, network, ip);
            assert.equal(got.country_only_city, null, ip);
          }
          assert.deepEqual(answers.errors, {
            invalid: "ValueError",
            reserved: "AddressNotFoundError",
            not_found: "AddressNotFoundError",
            me: "AddressNotFoundError", // the caller is 127.0.0.1: loopback
            bad_key: "AuthenticationError",
            limit: "OutOfQueriesError", // the tight key's budget went to the Node client
          });
        },
      });

      await t.step("node-ipinfo: lookupIp, getBatch and error classes", async () => {
        const run = async (token: string, request: unknown) => {
          const output = await new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              "-A",
              "--lock=deno.dev.lock", // node-ipinfo is a test package (README, "Dependencies")
              "tests/service/compat/_ipinfo_client.ts",
              `https://${host}/ipinfo`,
              token,
              JSON.stringify(request),
            ],
            cwd: ROOT,
            // node-ipinfo's HTTPS is node:https, which trusts Node's extra-CA variable.
            env: { NODE_EXTRA_CA_CERTS: certs.caFile },
          }).output();
          assert.ok(output.success, new TextDecoder().decode(output.stderr));
          return JSON.parse(new TextDecoder().decode(output.stdout));
        };
        for (const ip of ["81.2.69.142", "2001:4860:4860::8888"]) {
          const { value } = await run(key, { lookup: ip });
          const ours = await native(ip);
          const record = (await mmdblookup(CITY_FILE, ip)) as Any;
          assert.equal(value.ip, ours.ip);
          assert.equal(value.countryCode, ours.geoLocation.countryCode); // the client maps country
          assert.equal(value.city, ours.geoLocation.city ?? undefined);
          assert.equal(value.city, record.city?.names.en);
          assert.equal(value.region, record.subdivisions?.[0]?.names.en);
          assert.equal(value.loc, `${ours.geoLocation.latitude},${ours.geoLocation.longitude}`);
          assert.equal(value.org, `AS${ours.connection.asn_number} ${ours.connection.asn_org}`);
          assert.equal(value.timezone, record.location.time_zone);
          assert.equal(value.postal, record.postal?.code);
          assert.equal(value.asn.route, (await reference(ip)).network);
        }
        const batch = await run(key, { batch: ["8.8.8.8", "8.8.8.8/country", RESERVED, "1.2.3"] });
        assert.equal(batch.value["8.8.8.8"].countryCode, "US");
        assert.equal(batch.value["8.8.8.8/country"], "US");
        assert.deepEqual(batch.value[RESERVED], { ip: RESERVED, bogon: true });
        assert.equal(batch.value["1.2.3"].error.title, "Wrong ip");
        // Errors: the client maps 429 to ApiLimitError and any other 4xx to an Error.
        // An invalid address: the client refuses it itself; in a batch the server answers "Wrong ip" (above).
        assert.match((await run(key, { lookup: "1.2.3" })).error, /not a valid IPv4 address/);
        assert.deepEqual((await run(key, { lookup: NOT_FOUND })).value, { ip: NOT_FOUND });
        // A reserved address never leaves the client (it answers bogon itself); the server agrees.
        const bogon = await trusted.fetch(`https://${host}/ipinfo/${RESERVED}?token=${key}`);
        assert.deepEqual(await bogon.json(), { ip: RESERVED, bogon: true });
        assert.match((await run("not-a-key", { lookup: "8.8.8.8" })).error, / 403 /);
        assert.equal((await run(tight, { lookup: "8.8.8.8" })).limit, true);
      });
    } finally {
      trusted.close();
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** Drives geoip2.webservice.Client; prints one JSON object. argv: host, key, tight key, addresses. */
const PYTHON_CLIENT = `
import json, sys
import geoip2.webservice
host, key, tight, found = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
client = geoip2.webservice.Client(42, key, host=host)
out = {"found": {}, "errors": {}}
for ip in found:
    r = client.city(ip)
    c = client.country(ip)
    out["found"][ip] = {
        "country": r.country.iso_code,
        "registered": r.registered_country.iso_code,
        "country_names": r.country.names,
        "city": r.city.name,
        "latitude": r.location.latitude,
        "time_zone": r.location.time_zone,
        "asn": r.traits.autonomous_system_number,
        "ip": r.traits.ip_address,
        "network": r.raw["traits"]["network"],
        "country_only_city": c.raw.get("city"),
    }
def error_of(call):
    try:
        call()
        return "no error"
    except Exception as e:
        return type(e).__name__
out["errors"]["invalid"] = error_of(lambda: client.city("1.2.3"))
out["errors"]["reserved"] = error_of(lambda: client.city("${RESERVED}"))
out["errors"]["not_found"] = error_of(lambda: client.insights("${NOT_FOUND}"))
out["errors"]["me"] = error_of(lambda: client.city())
bad = geoip2.webservice.Client(42, "not-a-key", host=host)
out["errors"]["bad_key"] = error_of(lambda: bad.country("8.8.8.8"))
limited = geoip2.webservice.Client(42, tight, host=host)
out["errors"]["limit"] = error_of(lambda: limited.country("8.8.8.8"))
print(json.dumps(out))
`;
