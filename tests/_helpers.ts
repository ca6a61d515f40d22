/** Shared test fixtures: small City and ASN databases written by our own MMDB writer. */

import { type App, type AppDeps, createApp } from "../src/service/app/app.ts";
import { servedOf, type ServedSlot } from "../src/service/http/env.ts";
import { createLookup, type Lookup } from "../src/core/lookup/lookup.ts";
import { type MmdbValue, MmdbWriter, uint16 } from "../src/data/mmdb/writer/writer.ts";
import { type DataSet, openDataSet } from "../src/data/sources/data_set.ts";
import type { ManifestEntry } from "../src/data/sources/manifest.ts";
import { writeManifest } from "../src/data/sources/manifest.ts";
import { createUserAgentParser } from "../src/core/ua/parse.ts";
import { AccessControl } from "../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../src/service/keys_limits/rate_limiter.ts";
import { MemoryKeyStore } from "../src/data/store/keys.ts";
import { MemoryRateCounters } from "../src/data/store/rate_counts.ts";

/** A fixed instant: 2026-07-01T12:00:00Z (northern summer, so DST is active in Europe). */
export const FIXED_NOW = new Date("2026-07-01T12:00:00Z");

const names = (en: string, more: Record<string, string> = {}) => ({ en, ...more });
const europe = { code: "EU", geoname_id: 6255148, names: names("Europe", { de: "Europa" }) };

/** City records in the GeoLite2-City layout, by network. */
export const CITY_FIXTURES: Record<string, { [key: string]: MmdbValue }> = {
  "81.2.69.0/24": {
    city: { geoname_id: 2643743, names: names("London", { de: "London", ja: "ロンドン" }) },
    continent: europe,
    country: {
      geoname_id: 2635167,
      iso_code: "GB",
      names: names("United Kingdom", { de: "Vereinigtes Königreich" }),
    },
    location: {
      accuracy_radius: uint16(50),
      latitude: 51.5142,
      longitude: -0.0931,
      time_zone: "Europe/London",
    },
    postal: { code: "EC2V" },
    subdivisions: [{ iso_code: "ENG", names: names("England") }],
  },
  "2a02:ec0::/29": {
    city: { names: names("Berlin") },
    continent: europe,
    country: {
      iso_code: "DE",
      is_in_european_union: true,
      names: names("Germany", { de: "Deutschland" }),
    },
    location: {
      accuracy_radius: uint16(20),
      latitude: 52.5,
      longitude: 13.4,
      time_zone: "Europe/Berlin",
    },
    subdivisions: [{ iso_code: "BE", names: names("Land Berlin") }],
  },
  "1.1.1.0/24": {
    registered_country: { iso_code: "AU", names: names("Australia") },
  },
  "10.0.0.0/8": {
    country: { iso_code: "US", names: names("United States") },
    location: { time_zone: "America/New_York" },
  },
};

/** ASN records in the GeoLite2-ASN layout, by network. */
export const ASN_FIXTURES: Record<string, { [key: string]: MmdbValue }> = {
  "81.2.69.0/24": {
    autonomous_system_number: 20712,
    autonomous_system_organization: "Andrews & Arnold Ltd",
  },
  "2a02:ec0::/29": {
    autonomous_system_number: 3320,
    autonomous_system_organization: "Deutsche Telekom AG",
  },
  "9.9.9.0/24": { autonomous_system_number: 19281, autonomous_system_organization: "Quad9" },
};

function buildDb(
  databaseType: string,
  records: Record<string, { [key: string]: MmdbValue }>,
  languages: string[],
) {
  const writer = new MmdbWriter({ databaseType, languages });
  for (const [network, record] of Object.entries(records)) writer.insertNetwork(network, record);
  return writer.toBytes();
}

/**
 * Writes a data directory (City + ASN + manifest) into a new temp dir and returns its
 * path; the caller removes it.
 */
export async function writeFixtureDataDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-test-" });
  const entries: ManifestEntry[] = [];
  const add = async (
    kind: "city" | "asn",
    file: string,
    bytes: Uint8Array,
    databaseType: string,
  ) => {
    await Deno.writeFile(`${dir}/${file}`, bytes);
    entries.push({
      kind,
      file,
      sha256: "",
      source: "test fixture",
      license: "test",
      attribution: "test",
      built: FIXED_NOW.toISOString(),
      databaseType,
    });
  };
  await add(
    "city",
    "city.mmdb",
    buildDb("GeoLite2-City", CITY_FIXTURES, ["en", "de", "ja"]),
    "GeoLite2-City",
  );
  await add("asn", "asn.mmdb", buildDb("GeoLite2-ASN", ASN_FIXTURES, []), "GeoLite2-ASN");
  await writeManifest(dir, { sources: entries });
  return dir;
}

/**
 * A data set written by `write` and opened once per test process. The
 * databases are read into memory when opened, so the temporary directory is
 * removed right after.
 */
export function openedOnce(write: () => Promise<string>): () => Promise<DataSet> {
  let opened: Promise<DataSet> | null = null;
  return () =>
    opened ??= write().then(async (dir) => {
      try {
        return await openDataSet(dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
}

/** The fixture data set, built once per test process. */
export const fixtureDataSet: () => Promise<DataSet> = openedOnce(writeFixtureDataDir);

/** A lookup over `data` (the fixtures unless given) with a fixed clock. */
export async function fixtureLookup(now: Date = FIXED_NOW, data?: DataSet): Promise<Lookup> {
  return createLookup({
    data: data ?? await fixtureDataSet(),
    now: () => now,
    parseUserAgent: createUserAgentParser(),
  });
}

/** The configuration `fixtureApp` gives the app unless told otherwise. */
export const FIXTURE_APP_CONFIG: AppDeps["config"] = {
  bulkMax: 1000,
  trustedProxies: [],
  forwardedHeader: "x-forwarded-for",
  corsOrigins: ["*"],
};

/**
 * What `fixtureApp` takes: any of `createApp`'s deps (passed through as given),
 * `config` as overrides of FIXTURE_APP_CONFIG, and, when `slot` is not
 * given, the data set (`data`), lookup (`lookup`) or clock (`now`) the
 * fixture's slot is filled from.
 */
export type FixtureAppOptions =
  & Omit<Partial<AppDeps>, "config">
  & {
    config?: Partial<AppDeps["config"]>;
    /** The data set served (the fixtures unless given); not with `slot`. */
    data?: DataSet;
    /** The lookup served (`fixtureLookup(now, data)` unless given); not with `slot`. */
    lookup?: Lookup;
    /** The lookup's clock (FIXED_NOW unless given); not with `slot` or `lookup`. */
    now?: Date;
  };

/**
 * The HTTP app, the one place the tests call `createApp`: over the fixtures
 * with a fixed clock, FIXTURE_APP_CONFIG, and errors not logged, unless
 * `options` says otherwise. Rejects where `createApp` throws (bad configuration).
 */
export async function fixtureApp(options: FixtureAppOptions = {}): Promise<App> {
  const { config, data, lookup, now, ...deps } = options;
  const slot = deps.slot ?? await fixtureSlot(data, lookup, now);
  return createApp({
    logError: () => {},
    ...deps,
    slot,
    config: { ...FIXTURE_APP_CONFIG, ...config },
  });
}

async function fixtureSlot(
  data?: DataSet,
  lookup?: Lookup,
  now?: Date,
): Promise<ServedSlot> {
  const served = data ?? await fixtureDataSet();
  return { current: servedOf(served, lookup ?? await fixtureLookup(now, served)) };
}

/** Connection info as Deno.serve passes it, for in-process requests to /me. */
export function peer(hostname: string) {
  return { remoteAddr: { transport: "tcp" as const, hostname, port: 40000 } };
}

/** Where the real default data lives (built by `deno task data`). */
export const DEFAULT_DATA_DIR = new URL("../data", import.meta.url).pathname;

/** A desktop Chrome user agent (Windows), as the tests send it. */
export const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

/** The installed file of a kind in the default data (content-addressed: named by the manifest). */
export function defaultDataFile(kind: "city" | "asn"): string {
  const manifest = JSON.parse(Deno.readTextFileSync(`${DEFAULT_DATA_DIR}/manifest.json`));
  const entry = manifest.sources.find((e: { kind: string }) => e.kind === kind);
  if (!entry) throw new Error(`no ${kind} database in ${DEFAULT_DATA_DIR}: run "deno task data"`);
  return `${DEFAULT_DATA_DIR}/${entry.file}`;
}

/**
 * Keys required, one key named `name` with `limit` requests a minute (the defaults 1,000 a
 * minute, no anonymous callers): the access an app under test checks keys and limits with.
 */
export async function keyRequiredAccess(
  name: string,
  limit: number,
): Promise<{ access: AccessControl; key: string; store: MemoryKeyStore }> {
  const store = new MemoryKeyStore();
  const { key } = await store.create({ name, limit });
  const keys = new KeyTable(store);
  await keys.refresh();
  const access = new AccessControl(
    { auth: "required", rateLimit: 1000, rateWindow: 60, anonRateLimit: 0 },
    keys,
    new RateLimiter({ counters: new MemoryRateCounters() }),
  );
  return { access, key, store };
}
