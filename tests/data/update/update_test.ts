import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { parseFieldSelection } from "../../../src/core/format/mod.ts";
import { Hono } from "hono";
import type { AppEnv } from "../../../src/service/http/env.ts";
import { pinDataSet } from "../../../src/service/http/rules/data_version.ts";
import { applyAnswerRules } from "../../../src/service/http/rules/rules.ts";
import type { ServedSlot } from "../../../src/service/http/env.ts";
import { statusRoute } from "../../../src/service/app/status_route.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { type Manifest, readManifest } from "../../../src/data/sources/manifest.ts";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { FIXED_NOW } from "../../_helpers.ts";
import {
  type FeedServer,
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "./_feed_server.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
const fixture = (file: string) => Deno.readFileSync(`${FIXTURES}${file}`);
const LAST_MODIFIED = "Sat, 14 Oct 2023 10:00:00 GMT";

/** Serves the fixture lists and returns the sources that name them. */
function serveFixtures(server: FeedServer): SourceSpec[] {
  const files: [string, SourceSpec["kind"], string, SourceSpec["format"]][] = [
    ["tor-exits", "tor", "tor_bulk_exit_list.txt", "ip-list"],
    ["vpn-v4", "vpn", "x4bnet_vpn_ipv4.txt", "ip-list"],
    ["vpn-v6", "vpn", "x4bnet_vpn_ipv6.txt", "ip-list"],
    ["level1", "threat", "firehol_level1.netset", "ip-list"],
    ["dc-v4", "hosting", "x4bnet_datacenter_ipv4.txt", "ip-list"],
    ["aws", "hosting", "aws_ip-ranges.json", "aws-json"],
  ];
  return files.map(([name, kind, file, format], i) => {
    server.routes.set(`/${file}`, {
      body: fixture(file),
      etag: `"v1-${i}"`,
      lastModified: LAST_MODIFIED,
    });
    return feedSource(server, name, kind, `/${file}`, { format });
  });
}

async function lookupIn(dataDir: string) {
  const data = await openDataSet(dataDir);
  return createLookup({ data, now: () => FIXED_NOW, parseUserAgent: createUserAgentParser() });
}

async function withServer(fn: (server: FeedServer, dataDir: string) => Promise<void>) {
  const server = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    await fn(server, dataDir);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
}

const manifestOf = async (dir: string) => (await readManifest(dir)) as Manifest;
const entry = (m: Manifest, name: string) => m.sources.find((e) => e.name === name)!;

Deno.test("data update installs every feed; a Tor exit answers isTor true and isThreat high", async () => {
  await withServer(async (server, dataDir) => {
    const sources = serveFixtures(server);
    const { outcomes, progress } = await update(dataDir, sources);
    assert.deepEqual(outcomes.map((o) => o.status), sources.map(() => "updated"));
    assert.equal(progress.length, sources.length, "one progress line per source");
    assert.match(progress[0]!, /^tor-exits: 30 entries, dated 2023-10-14$/);

    const lookup = await lookupIn(dataDir);
    // Line 8 of the Tor fixture; the rest from the first line of each list.
    assert.deepEqual(lookup.find("185.220.101.82").security, {
      isVpn: false,
      isTor: true,
      isThreat: "high",
    });
    assert.deepEqual(lookup.find("2.26.157.77").security, {
      isVpn: true,
      isTor: false,
      isThreat: "medium",
    });
    assert.deepEqual(lookup.find("2001:550:1d05::1").security.isVpn, true);
    assert.deepEqual(lookup.find("1.12.0.1").security, {
      isVpn: false,
      isTor: false,
      isThreat: "medium", // data centre
    });
    assert.equal(lookup.find("1.10.16.1").security.isThreat, "high"); // FireHOL 1.10.16.0/20
    assert.equal(lookup.find("3.5.140.7").security.isThreat, "medium"); // AWS 3.5.140.0/22
    assert.deepEqual(lookup.find("81.2.69.142").security, {
      isVpn: false,
      isTor: false,
      isThreat: "low",
    });

    const manifest = await manifestOf(dataDir);
    const tor = entry(manifest, "tor-exits");
    assert.equal(
      tor.dataDate,
      new Date(LAST_MODIFIED).toISOString(),
      "Last-Modified dates a plain list",
    );
    assert.equal(tor.count, 30);
    assert.equal(
      entry(manifest, "level1").dataDate,
      "2015-11-13T17:18:59.000Z",
      "FireHOL's own date",
    );
    assert.equal(entry(manifest, "aws").dataDate, "2021-08-17T11:31:16.000Z");
    assert.equal(manifest.failures, undefined);
  });
});

Deno.test("data update sends ETag and Last-Modified back and keeps the data on 304", async () => {
  await withServer(async (server, dataDir) => {
    const sources = serveFixtures(server).slice(0, 1);
    await update(dataDir, sources);
    const before = await Deno.readTextFile(`${dataDir}/manifest.json`);
    server.requests.length = 0;
    const { outcomes } = await update(dataDir, sources);
    assert.deepEqual(outcomes, [{
      name: "tor-exits",
      status: "unchanged",
      detail: "not modified (HTTP 304)",
    }]);
    assert.deepEqual(server.requests, [{
      path: "/tor_bulk_exit_list.txt",
      ifNoneMatch: '"v1-0"',
      ifModifiedSince: LAST_MODIFIED,
    }]);
    assert.equal(await Deno.readTextFile(`${dataDir}/manifest.json`), before);
  });
});

Deno.test("data update downloads again, without If-None-Match, a list whose settings changed", async () => {
  await withServer(async (server, dataDir) => {
    const [tor] = serveFixtures(server);
    const hosting = { ...tor!, name: "dc", kind: "hosting" as const, provider: "Old name" };
    await update(dataDir, [hosting]);
    server.requests.length = 0;
    // Same URL, same ETag upstream: only the sources file changed (a new provider name).
    const { outcomes } = await update(dataDir, [{ ...hosting, provider: "New name" }]);
    assert.equal(outcomes[0]!.status, "updated");
    assert.equal(server.requests[0]!.ifNoneMatch, null);
    assert.equal(entry(await manifestOf(dataDir), "dc").provider, "New name");
  });
});

Deno.test("data update moves a list whose kind changed out of its old kind's tree", async () => {
  await withServer(async (server, dataDir) => {
    const sources = serveFixtures(server).filter((s) => s.kind === "hosting"); // dc-v4, aws
    const kindsOf = async (ip: string) =>
      (await lookupIn(dataDir)).find(ip, { selection: parseFieldSelection("risk") }).risk!.matches
        .filter((m) => m.source === "aws").map((m) => m.kind);
    await update(dataDir, sources);
    assert.deepEqual(await kindsOf("3.5.140.7"), ["hosting"]);
    const moved = sources.map((s) => s.name === "aws" ? { ...s, kind: "threat" as const } : s);
    for (let run = 0; run < 2; run++) { // the second run gets 304s
      await update(dataDir, moved);
      assert.deepEqual(await kindsOf("3.5.140.7"), ["threat"], `run ${run}`);
    }
  });
});

Deno.test("/status shows an installed source whose last update failed, and why", async () => {
  await withServer(async (server, dataDir) => {
    const [tor] = serveFixtures(server);
    await update(dataDir, [tor!]);
    server.routes.set("/tor_bulk_exit_list.txt", { status: 500 });
    await update(dataDir, [tor!]);
    const data = await openDataSet(dataDir);
    const services = { current: servedOf(data, await lookupIn(dataDir)) };
    const status = (s: ServedSlot) => {
      const failed = () => new Response(null, { status: 500 });
      const answered = applyAnswerRules([pinDataSet(s)], failed);
      return new Hono<AppEnv>().get("/status", answered(statusRoute())).request("/status");
    };
    const body = await (await status(services)).json();
    const shown = body.data.sources.find((s: { name: string }) => s.name === "tor-exits");
    assert.equal(shown.status, "installed"); // still served
    assert.match(shown.lastUpdateFailed.reason, /HTTP 500/);
    assert.ok(!Number.isNaN(Date.parse(shown.lastUpdateFailed.at)));
    // A good update clears it.
    server.routes.set("/tor_bulk_exit_list.txt", { body: fixture("tor_bulk_exit_list.txt") });
    await update(dataDir, [tor!]);
    const again = await (await status({
      current: servedOf(await openDataSet(dataDir), services.current.lookup),
    })).json();
    assert.equal(again.data.sources[0].lastUpdateFailed, undefined);
  });
});

/** Each broken answer must fail its source only, keep what was installed, and name why. */
const BROKEN: {
  name: string;
  route: (good: Uint8Array) => Parameters<FeedServer["routes"]["set"]>[1];
  source?: Partial<SourceSpec>;
  error: RegExp;
  requests?: number;
}[] = [
  {
    name: "HTTP 429 is not retried (exactly one request)",
    route: () => ({ status: 429, body: "slow down" }),
    error: /HTTP 429 .*rate limited/,
    requests: 1,
  },
  {
    name: "HTTP 403 is not retried",
    route: () => ({ status: 403 }),
    error: /HTTP 403/,
    requests: 1,
  },
  {
    name: "HTTP 503 is retried, then fails",
    route: () => ({ status: 503 }),
    error: /HTTP 503 .*after 3 attempts/,
    requests: 3,
  },
  {
    name: "a truncated download",
    route: (good) => ({
      body: new TextDecoder().decode(good.subarray(0, 100)),
      truncateTo: good.length,
    }),
    error:
      /^Download from http:\/\/127\.0\.0\.1:\d+\/tor_bulk_exit_list\.txt failed: error reading a body|^Truncated download/,
  },
  {
    name: "a checksum mismatch",
    route: (good) => ({ body: good }),
    source: { sha256: "0".repeat(64) },
    error: /Checksum mismatch: the download's sha256 is [0-9a-f]{64}, expected 0{64}/,
  },
  {
    name: "a malformed line",
    route: (good) => ({ body: `${new TextDecoder().decode(good)}<html>oops</html>\n` }),
    error: /tor-exits line 31: invalid address or network "<html>oops<\/html>"/,
  },
  {
    name: "an empty list",
    route: () => ({ body: "# nothing today\n" }),
    error: /Refused: the list is empty/,
  },
  {
    name: "a list shrunk by more than half",
    route: (good) => ({
      body: new TextDecoder().decode(good).split("\n").slice(0, 10).join("\n"),
    }),
    error: /Refused: the list shrank from 30 to 10 entries/,
  },
  {
    name: "a server that never answers (timeout)",
    route: () => ({ hang: true }),
    error: /timed out: nothing received for 200 ms/,
  },
  {
    name: "a trickle that never goes quiet (too slow)",
    route: (good) => ({ body: good, drip: 20 }),
    error: /abandoned: \d+ bytes in \d+(\.\d+)? s, under 1 KB\/s/,
    requests: 1, // not retried
  },
];

for (const broken of BROKEN) {
  Deno.test(`data update keeps the installed list on ${broken.name}`, async () => {
    await withServer(async (server, dataDir) => {
      const good = fixture("tor_bulk_exit_list.txt");
      const [source] = serveFixtures(server).slice(0, 1);
      await update(dataDir, [source!]);
      const installed = entry(await manifestOf(dataDir), "tor-exits");

      server.routes.set("/tor_bulk_exit_list.txt", broken.route(good));
      const spec = { ...source!, url: server.url("/tor_bulk_exit_list.txt"), ...broken.source };
      server.requests.length = 0;
      const { outcomes, progress } = await update(dataDir, [spec], {
        timeoutMs: 200,
        attempts: 3,
      });
      assert.equal(outcomes[0]!.status, "failed");
      assert.match(outcomes[0]!.detail, broken.error);
      assert.match(progress.at(-1)!, /^tor-exits: FAILED: /);
      if (broken.requests) assert.equal(server.requests.length, broken.requests);

      const manifest = await manifestOf(dataDir);
      assert.deepEqual(entry(manifest, "tor-exits"), installed, "the installed entry is kept");
      assert.match(manifest.failures?.["tor-exits"]?.reason ?? "", broken.error);
      const lookup = await lookupIn(dataDir);
      assert.equal(lookup.find("185.220.101.82").security.isTor, true, "still served");
      const leftovers = [...Deno.readDirSync(dataDir)].filter((f) =>
        f.name.startsWith(".") && f.name !== ".lock"
      );
      assert.deepEqual(leftovers, [], "no temporary file left behind");
    });
  });
}

Deno.test("data update: one failed source does not stop the others", async () => {
  await withServer(async (server, dataDir) => {
    const sources = serveFixtures(server);
    server.routes.set("/x4bnet_vpn_ipv4.txt", { status: 500 });
    const { outcomes } = await update(dataDir, sources, { attempts: 1 });
    assert.deepEqual(
      outcomes.map((o) => `${o.name} ${o.status}`),
      sources.map((s) => `${s.name} ${s.name === "vpn-v4" ? "failed" : "updated"}`),
    );
    const lookup = await lookupIn(dataDir);
    assert.equal(
      lookup.find("2001:550:1d05::1").security.isVpn,
      true,
      "the IPv6 VPN list installed",
    );
  });
});

/** A City-kind MMDB the server can hand out. */
function cityDb(databaseType: string) {
  const writer = new MmdbWriter({ databaseType, buildEpoch: 1_750_000_000 });
  writer.insertNetwork("81.2.69.0/24", { country: { iso_code: "GB", names: { en: "UK" } } });
  return writer.toBytes();
}

Deno.test("data update installs a downloaded MMDB after checking it, and refuses a corrupt one", async () => {
  await withServer(async (server, dataDir) => {
    const good = cityDb("GeoIP2-City");
    const sha256 = createHash("sha256").update(good).digest("hex");
    server.routes.set("/city.mmdb", { body: good });
    const spec: SourceSpec = {
      ...feedSource(server, "my-city", "city", "/city.mmdb"),
      format: "mmdb",
      sha256,
    };
    const first = await update(dataDir, [spec]);
    assert.equal(first.outcomes[0]!.status, "updated", first.progress.join("\n"));
    const installed = entry(await manifestOf(dataDir), "my-city");
    assert.equal(installed.dataDate, new Date(1_750_000_000_000).toISOString());
    assert.equal((await lookupIn(dataDir)).find("81.2.69.142").geoLocation.countryCode, "GB");

    const corrupt = good.slice();
    corrupt.fill(0xff, 0, 12); // tree records pointing far outside the file
    for (
      const [body, error] of [
        [corrupt, /node 0 points outside the data section/],
        [good.subarray(0, good.length - 40), /Not a valid MaxMind DB|metadata/],
        [cityDb("GeoLite2-ASN"), /database_type "GeoLite2-ASN" is not a database of kind "city"/],
      ] as const
    ) {
      server.routes.set("/city.mmdb", { body });
      const { outcomes } = await update(dataDir, [{ ...spec, sha256: undefined }]);
      assert.equal(outcomes[0]!.status, "failed");
      assert.match(outcomes[0]!.detail, error);
      assert.deepEqual(entry(await manifestOf(dataDir), "my-city"), installed);
    }
  });
});

Deno.test("data update drops a list removed from the sources file", async () => {
  await withServer(async (server, dataDir) => {
    const sources = serveFixtures(server);
    await update(dataDir, sources);
    await update(dataDir, sources.filter((s) => s.name !== "tor-exits"));
    const manifest = await manifestOf(dataDir);
    assert.equal(manifest.sources.some((e) => e.kind === "tor"), false);
    const lookup = await lookupIn(dataDir);
    assert.equal(lookup.find("185.220.101.82").security.isTor, null, "no Tor source: unknown");
    const files = [...Deno.readDirSync(`${dataDir}/feeds`)].map((f) => f.name);
    assert.ok(!files.some((f) => f.startsWith("tor")), files.join(", "));
  });
});

Deno.test("data update: a database source renamed (replaced) leaves the manifest, and its file goes", async () => {
  await withServer(async (server, dataDir) => {
    server.routes.set("/old.mmdb", { body: cityDb("GeoIP2-City") });
    const writer = new MmdbWriter({ databaseType: "GeoIP2-City", buildEpoch: 1_760_000_000 });
    writer.insertNetwork("81.2.69.0/24", { country: { iso_code: "IE", names: { en: "Ireland" } } });
    server.routes.set("/new.mmdb", { body: writer.toBytes() });
    const old = { ...feedSource(server, "old-city", "city", "/old.mmdb"), format: "mmdb" as const };
    await update(dataDir, [old]);
    const oldFile = entry(await manifestOf(dataDir), "old-city").file;
    const renamed = {
      ...feedSource(server, "new-city", "city", "/new.mmdb"),
      format: "mmdb" as const,
    };
    const { progress } = await update(dataDir, [renamed]);
    assert.ok(
      progress.includes("old-city: removed (no longer in the sources file)"),
      progress.join("\n"),
    );
    const manifest = await manifestOf(dataDir);
    assert.deepEqual(manifest.sources.filter((e) => e.kind === "city").map((e) => e.name), [
      "new-city",
    ]);
    assert.equal((await lookupIn(dataDir)).find("81.2.69.142").geoLocation.countryCode, "IE");
    assert.equal(
      await Deno.stat(`${dataDir}/${oldFile}`).catch(() => null),
      null,
      "old file removed",
    );
  });
});

Deno.test("data update never retires a working database until its replacement is installed", async () => {
  await withServer(async (server, dataDir) => {
    server.routes.set("/old.mmdb", { body: cityDb("GeoIP2-City") });
    const old = { ...feedSource(server, "old-city", "city", "/old.mmdb"), format: "mmdb" as const };
    await update(dataDir, [old]);
    const working = entry(await manifestOf(dataDir), "old-city");
    // Its replacement fails (a missing file): the old one stays, and says why.
    const other = {
      ...feedSource(server, "other-city", "city", "/missing.mmdb"),
      format: "mmdb" as const,
    };
    const failed = await update(dataDir, [other]);
    assert.deepEqual(failed.outcomes.map((o) => o.status), ["failed"]);
    let manifest = await manifestOf(dataDir);
    assert.deepEqual(entry(manifest, "old-city"), working, "kept as it was");
    assert.match(
      manifest.failures?.["old-city"]?.reason ?? "",
      /^kept: other-city is to replace it and is not installed \(HTTP 404 \(not found\)/,
    );
    assert.ok(
      failed.progress.some((line) => line.startsWith("old-city: kept: other-city")),
      failed.progress.join("\n"),
    );
    assert.equal((await lookupIn(dataDir)).find("81.2.69.142").geoLocation.countryCode, "GB");
    // /status shows an installed source's failure (lastUpdateFailed): the kept one, and why.
    const data = await openDataSet(dataDir);
    assert.ok(data.installed.some((s) => s.name === "old-city"));
    assert.match(data.manifest.failures?.["old-city"]?.reason ?? "", /other-city is to replace/);

    // Once the replacement installs, the old one goes.
    server.routes.set("/missing.mmdb", { body: cityDb("GeoIP2-City") });
    await update(dataDir, [other]);
    manifest = await manifestOf(dataDir);
    assert.deepEqual(manifest.sources.filter((e) => e.kind === "city").map((e) => e.name), [
      "other-city",
    ]);
    assert.equal(manifest.failures, undefined);
  });
});

Deno.test("data update keeps the last City and ASN databases when the sources file names none", async () => {
  await withServer(async (server, dataDir) => {
    const sources = serveFixtures(server).slice(0, 1); // a Tor list, and no database
    // No base ASN source either: the sources file has lists only.
    await update(dataDir, sources, { sources });
    const manifest = await manifestOf(dataDir);
    assert.ok(manifest.sources.some((e) => e.kind === "asn"), "the ASN database stays");
    assert.match(manifest.failures?.["test-asn"]?.reason ?? "", /names no City or ASN database/);
    assert.equal((await lookupIn(dataDir)).find("185.220.101.82").security.isTor, true);
  });
});

Deno.test("data update refuses a download past its cap, naming the source and the cap; secrets stay out", async () => {
  await withServer(async (server, dataDir) => {
    server.routes.set("/big.txt", { body: "192.0.2.1\n".repeat(300_000) }); // 3 MB
    const spec: SourceSpec = {
      ...feedSource(server, "big", "threat", "/big.txt?token=hunter2"),
      maxDownloadMB: 1,
    };
    const { outcomes } = await update(dataDir, [spec]);
    assert.equal(outcomes[0]!.status, "failed");
    assert.match(
      outcomes[0]!.detail,
      /^Refused: the download (\(Content-Length 3000000\) )?exceeds the cap of 1 MB \(set "maxDownloadMB" in the sources file to change it\)$/,
    );
    const text = await Deno.readTextFile(`${dataDir}/manifest.json`);
    assert.doesNotMatch(text, /hunter2/);
    assert.deepEqual(
      [...Deno.readDirSync(dataDir)].filter((e) => e.name.startsWith(".download")),
      [],
    );
  });
});
