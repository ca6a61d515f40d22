import assert from "node:assert/strict";
import { continents, countries } from "countries-list";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { reservedRangeName } from "../../../src/base/ip/reserved.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { DEFAULT_DATA_DIR, defaultDataFile, FIXED_NOW } from "../../_helpers.ts";
import {
  mmdblookup,
  MMDBLOOKUP_MISSING,
  mmdblookupAvailable,
  type MmdblookupValue,
  parseMmdblookupDump,
  parseMmdblookupDumpTyped,
} from "../../_mmdblookup.ts";
import { seededRandom } from "../../_random.ts";
import { ignoredName } from "../../_skip.ts";

// Our lookup on the real data against libmaxminddb's mmdblookup, an independent reader,
// for deterministic-random public addresses.

const CITY_FILE = defaultDataFile("city");
const ASN_FILE = defaultDataFile("asn");
const PER_FAMILY = 150; // addresses the City database knows, per IP version
const SEED = 0x1b2c3d4e;

const available = mmdblookupAvailable();
const missing = available ? null : MMDBLOOKUP_MISSING;

/** Random IPv4 and IPv6 candidates; IPv6 drawn from the RIRs' blocks so most are allocated. */
function* candidates(version: 4 | 6, random: () => number): Generator<string> {
  const int = (n: number) => Math.floor(random() * n);
  const hex = () => int(0x10000).toString(16);
  const v6Heads = [
    () => `2001:${(0x200 + int(0x4c00)).toString(16)}`, // RIR /23s in 2001::/16
    () => `2003:${hex()}`, // RIPE
    ...[0x2400, 0x2600, 0x2800, 0x2a00, 0x2c00].map((base) => () =>
      `${(base + int(16)).toString(16)}:${hex()}` // APNIC, ARIN, LACNIC, RIPE, AFRINIC /12s
    ),
  ];
  for (;;) {
    const text = version === 4
      ? [int(256), int(256), int(256), int(256)].join(".")
      : `${v6Heads[int(v6Heads.length)]!()}:${[1, 2, 3, 4, 5, 6].map(hex).join(":")}`;
    const ip = parseIp(text);
    if (reservedRangeName(ip) === null) yield ip.address;
  }
}

type Rec = { [key: string]: MmdblookupValue };
const isRec = (v: MmdblookupValue | null | undefined): v is Rec =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
const rec = (v: MmdblookupValue | undefined): Rec | undefined => (isRec(v) ? v : undefined);
const str = (v: MmdblookupValue | undefined) => (typeof v === "string" ? v : null);
const num = (v: MmdblookupValue | undefined) => (typeof v === "number" ? v : null);
const enName = (v: MmdblookupValue | undefined) => str(rec(rec(v)?.names)?.en);
/** mmdblookup prints doubles with %f: compare at its six decimals. */
const sixDecimals = (v: number | null) => (v === null ? null : v.toFixed(6));

/** What our geoLocation (English) and time zone must say, derived from mmdblookup's record. */
function expectedFromMmdblookup(record: Rec) {
  const country = rec(record.country) ?? rec(record.registered_country);
  const subdivisions = record.subdivisions;
  const subdivision = Array.isArray(subdivisions) ? rec(subdivisions[0]) : undefined;
  const location = rec(record.location);
  // Without a continent or a zone in the record (an address known only by its registered
  // country), both come from the country: its continent, and its zone when it has one.
  const code = str(country?.iso_code);
  const fromCountry = code === null ? undefined : countries[code as keyof typeof countries];
  const zones = code === null ? [] : new Intl.Locale(`und-${code}`).getTimeZones?.() ?? [];
  return {
    continent: record.continent === undefined
      ? fromCountry === undefined ? null : continents[fromCountry.continent]
      : enName(record.continent),
    continentCode: record.continent === undefined
      ? fromCountry?.continent ?? null
      : str(rec(record.continent)?.code),
    country: enName(country),
    countryCode: str(country?.iso_code),
    region: enName(subdivision),
    regionCode: str(subdivision?.iso_code),
    city: enName(record.city),
    postal_Code: str(rec(record.postal)?.code),
    latitude: sixDecimals(num(location?.latitude)),
    longitude: sixDecimals(num(location?.longitude)),
    accuracy_radius: num(location?.accuracy_radius),
    is_in_eu: country?.is_in_european_union === true,
    time_zone: str(location?.time_zone) ?? (zones.length === 1 ? zones[0]! : null),
  };
}

Deno.test("parseMmdblookupDumpTyped() and its plain form read every scalar type, maps, arrays", () => {
  const dump = [
    "",
    "  {",
    '    "a map": ',
    "      {",
    '        "text": ',
    '          "He said "hi", twice" <utf8_string>',
    '        "empty": ',
    '          "" <utf8_string>',
    "      }",
    '    "list": ',
    "      [",
    "        15169 <uint32>",
    "        65535 <uint16>",
    "        -7 <int32>",
    "        51.596700 <double>",
    "        -0.500000 <float>",
    "        true <boolean>",
    "        false <boolean>",
    "        18446744073709551615 <uint64>",
    "        0x0000000000000001000000000000000f <uint128>",
    "        00ff10 <bytes>",
    "      ]",
    '    "empty map": ',
    "      {",
    "      }",
    "  }",
    "",
    "",
  ].join("\n");
  assert.deepEqual(parseMmdblookupDumpTyped(dump), {
    t: "map",
    v: [
      ["a map", {
        t: "map",
        v: [
          ["text", { t: "utf8_string", v: 'He said "hi", twice' }],
          ["empty", { t: "utf8_string", v: "" }],
        ],
      }],
      ["list", {
        t: "array",
        v: [
          { t: "uint32", v: 15169 },
          { t: "uint16", v: 65535 },
          { t: "int32", v: -7 },
          { t: "double", v: 51.5967 },
          { t: "float", v: -0.5 },
          { t: "boolean", v: true },
          { t: "boolean", v: false },
          { t: "uint64", v: 18446744073709551615n },
          { t: "uint128", v: (1n << 64n) + 15n },
          { t: "bytes", v: Uint8Array.of(0, 255, 16) },
        ],
      }],
      ["empty map", { t: "map", v: [] }],
    ],
  });
  assert.deepEqual(parseMmdblookupDump(dump), {
    "a map": { text: 'He said "hi", twice', empty: "" },
    list: [
      15169,
      65535,
      -7,
      51.5967,
      -0.5,
      true,
      false,
      18446744073709551615n,
      (1n << 64n) + 15n,
      Uint8Array.of(0, 255, 16),
    ],
    "empty map": {},
  });
  assert.equal(parseMmdblookupDump('\n  "United Kingdom" <utf8_string>\n\n'), "United Kingdom");
  assert.deepEqual(parseMmdblookupDumpTyped("\n  7 <uint16>\n\n"), { t: "uint16", v: 7 });
  assert.throws(() => parseMmdblookupDump("\n  12 <nonsense>\n"), /unknown type <nonsense>/);
  assert.throws(() => parseMmdblookupDump("\n  {\n"), /Cannot parse mmdblookup output/);
});

/**
 * Addresses whose City record has no `country`, only `registered_country` (found with
 * mmdblookup), so the fallback and its EU flag are compared too: US; GR and DK (EU).
 */
const REGISTERED_COUNTRY_ONLY = ["148.163.203.217", "193.5.18.25", "194.182.97.134"];

Deno.test({
  name: ignoredName(
    "lookup() agrees with mmdblookup on geoLocation, time zone and ASN for 300 random addresses",
    missing,
  ),
  ignore: !available,
  fn: async () => {
    const data = await openDataSet(DEFAULT_DATA_DIR);
    const lookup = createLookup({
      data,
      now: () => FIXED_NOW,
      parseUserAgent: createUserAgentParser(),
    });
    const mismatches: string[] = [];
    const compare = (ip: string, field: string, ours: unknown, theirs: unknown) => {
      if (!Object.is(ours, theirs)) {
        const detail = `ours ${JSON.stringify(ours)}, mmdblookup ${JSON.stringify(theirs)}`;
        mismatches.push(`${ip} ${field}: ${detail}`);
      }
    };

    /** Compares one address; false when mmdblookup's City database does not know it. */
    const check = async (ip: string): Promise<boolean> => {
      const cityRecord = await mmdblookup(CITY_FILE, ip);
      if (!isRec(cityRecord)) {
        // Not in the City database: our reader must not find it either.
        compare(ip, "city record", data.city?.get(ip) ?? null, null);
        return false;
      }
      const result = lookup.find(ip);
      const geo = result.geoLocation;
      const ours = {
        ...geo,
        latitude: sixDecimals(geo.latitude),
        longitude: sixDecimals(geo.longitude),
        time_zone: result.timezone.time_zone,
      };
      for (const [field, value] of Object.entries(expectedFromMmdblookup(cityRecord))) {
        compare(ip, field, ours[field as keyof typeof ours], value);
      }
      const asnRecord = await mmdblookup(ASN_FILE, ip);
      const asn = isRec(asnRecord) ? asnRecord : {};
      compare(ip, "asn_number", result.connection.asn_number, num(asn.autonomous_system_number));
      compare(ip, "asn_org", result.connection.asn_org, str(asn.autonomous_system_organization));
      return true;
    };

    for (const ip of REGISTERED_COUNTRY_ONLY) {
      assert.equal(await mmdblookup(CITY_FILE, ip, ["country"]), undefined, `${ip} has a country`);
      assert.ok(await check(ip), ip);
    }
    const random = seededRandom(SEED);
    const known = { 4: 0, 6: 0 };
    let unknown = 0;
    for (const version of [4, 6] as const) {
      const source = candidates(version, random);
      while (known[version] < PER_FAMILY) {
        if (await check(source.next().value as string)) known[version]++;
        else unknown++;
      }
    }
    assert.deepEqual(mismatches, [], `${mismatches.length} disagreements`);
    // The draw must also exercise the "not found" side.
    assert.ok(unknown > 0, "no candidate was outside the City database");
  },
});
