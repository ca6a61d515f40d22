import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { type Manifest, readManifest } from "../../../src/data/sources/manifest.ts";
import { readSourcesFile, type SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { FIXED_NOW } from "../../_helpers.ts";
import { update, writeBaseDataDir } from "./_feed_server.ts";

const TOR_FIXTURE = new URL("../../fixtures/feeds/tor_bulk_exit_list.txt", import.meta.url);
/** Line 8 of the Tor fixture. */
const TOR_EXIT = "185.220.101.82";

/** A base data directory and a directory of feeds beside it (a closed network's "USB stick"). */
async function withDirs(fn: (dataDir: string, feeds: string) => Promise<void>) {
  const dataDir = await writeBaseDataDir();
  const feeds = await Deno.makeTempDir({ prefix: "ipintel-feeds-" });
  try {
    await fn(dataDir, feeds);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(feeds, { recursive: true });
  }
}

function torSource(url: string): SourceSpec {
  return {
    name: "tor-exits",
    kind: "tor",
    format: "ip-list",
    url,
    license: "test",
    attribution: "test",
  };
}

async function securityOf(dataDir: string, ip: string) {
  const data = await openDataSet(dataDir);
  const lookup = createLookup({
    data,
    now: () => FIXED_NOW,
    parseUserAgent: createUserAgentParser(),
  });
  return lookup.find(ip).security;
}

const manifestOf = async (dir: string) => (await readManifest(dir)) as Manifest;

Deno.test("a file:// list installs like a download and answers isTor true", async () => {
  await withDirs(async (dataDir, feeds) => {
    await Deno.copyFile(TOR_FIXTURE, `${feeds}/tor.txt`);
    const url = pathToFileURL(`${feeds}/tor.txt`).href;
    const { outcomes } = await update(dataDir, [torSource(url)]);
    assert.deepEqual(outcomes.map((o) => o.status), ["updated"]);
    assert.match(outcomes[0]!.detail, /^30 entries/);
    assert.equal((await securityOf(dataDir, TOR_EXIT)).isTor, true);
    const entry = (await manifestOf(dataDir)).sources.find((e) => e.name === "tor-exits")!;
    assert.equal(entry.source, url);
    assert.equal(entry.download?.local?.size, (await Deno.stat(`${feeds}/tor.txt`)).size);
  });
});

Deno.test("a plain path in the sources file is relative to the sources file", async () => {
  await withDirs(async (dataDir, feeds) => {
    await Deno.mkdir(`${feeds}/lists`);
    await Deno.copyFile(TOR_FIXTURE, `${feeds}/lists/tor.txt`);
    await Deno.writeTextFile(
      `${feeds}/sources.json`,
      JSON.stringify({
        sources: [{ name: "tor-exits", kind: "tor", format: "ip-list", url: "lists/tor.txt" }],
      }),
    );
    const { sources } = await readSourcesFile(`${feeds}/sources.json`);
    assert.equal(sources[0]!.url, pathToFileURL(`${feeds}/lists/tor.txt`).href);
    const { outcomes } = await update(dataDir, sources);
    assert.equal(outcomes[0]!.status, "updated");
    assert.equal((await securityOf(dataDir, TOR_EXIT)).isTor, true);
  });
});

Deno.test("a local list: unchanged is a no-op, touched records its time, changed installs again", async () => {
  await withDirs(async (dataDir, feeds) => {
    const path = `${feeds}/tor.txt`;
    await Deno.copyFile(TOR_FIXTURE, path);
    const sources = [torSource(pathToFileURL(path).href)];
    await update(dataDir, sources);
    const installed = await Deno.readTextFile(`${dataDir}/manifest.json`);

    const same = await update(dataDir, sources);
    assert.deepEqual(same.outcomes.map((o) => [o.status, o.detail]), [
      ["unchanged", "unchanged on disk"],
    ]);
    assert.equal(await Deno.readTextFile(`${dataDir}/manifest.json`), installed, "a no-op");

    // Same bytes, a new modification time: nothing installed, the time remembered.
    const later = new Date(Date.parse("2030-01-01T00:00:00Z"));
    await Deno.utime(path, later, later);
    const touched = await update(dataDir, sources);
    assert.deepEqual(touched.outcomes.map((o) => o.status), ["unchanged"]);
    const entry = (await manifestOf(dataDir)).sources.find((e) => e.name === "tor-exits")!;
    assert.equal(entry.download?.local?.mtime, later.toISOString());
    const before = JSON.parse(installed) as Manifest;
    assert.equal(entry.file, before.sources.find((e) => e.name === "tor-exits")!.file);

    // New content: another size (a file whose size and time both stay is taken as unchanged).
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.trimEnd().split("\n").slice(0, 20).join("\n") + "\n");
    const changed = await update(dataDir, sources);
    assert.deepEqual(changed.outcomes.map((o) => o.status), ["updated"]);
    assert.match(changed.outcomes[0]!.detail, /^20 entries/);
    const now = (await manifestOf(dataDir)).sources.find((e) => e.name === "tor-exits")!;
    assert.equal(now.count, 20);
    assert.notEqual(now.file, entry.file);
  });
});

Deno.test("a missing local file fails that source alone, naming the file; the installed list stays", async () => {
  await withDirs(async (dataDir, feeds) => {
    const path = `${feeds}/tor.txt`;
    await Deno.copyFile(TOR_FIXTURE, path);
    const sources = [torSource(pathToFileURL(path).href)];
    await update(dataDir, sources);
    await Deno.remove(path);
    const { outcomes } = await update(dataDir, sources);
    assert.equal(outcomes[0]!.status, "failed");
    assert.equal(outcomes[0]!.detail, `Cannot read ${path}: it does not exist`);
    assert.equal((await securityOf(dataDir, TOR_EXIT)).isTor, true, "the old list still answers");
    const manifest = await manifestOf(dataDir);
    assert.match(manifest.failures?.["tor-exits"]?.reason ?? "", /does not exist/);
  });
});

Deno.test("a local MaxMind DB is checked and installed like a downloaded one", async () => {
  await withDirs(async (dataDir, feeds) => {
    const writer = new MmdbWriter({ databaseType: "GeoLite2-City", buildEpoch: 1_700_000_000 });
    writer.insertNetwork("81.2.69.0/24", { country: { iso_code: "GB", names: { en: "UK" } } });
    await Deno.writeFile(`${feeds}/city.mmdb`, writer.toBytes());
    await Deno.writeFile(`${feeds}/broken.mmdb`, new TextEncoder().encode("not a database"));
    const city = (file: string): SourceSpec => ({
      name: "my-city",
      kind: "city",
      format: "mmdb",
      url: pathToFileURL(`${feeds}/${file}`).href,
      license: "test",
      attribution: "test",
    });
    const refused = await update(dataDir, [city("broken.mmdb")]);
    assert.equal(refused.outcomes[0]!.status, "failed");
    const { outcomes } = await update(dataDir, [city("city.mmdb")]);
    assert.deepEqual(outcomes.map((o) => o.status), ["updated"]);
    const data = await openDataSet(dataDir);
    assert.equal(data.city?.get("81.2.69.142")?.country?.iso_code, "GB");
  });
});
