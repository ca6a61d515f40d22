import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { dataVersion } from "../../../src/data/sources/data_version.ts";
import type { Manifest } from "../../../src/data/sources/manifest.ts";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { update, writeBaseDataDir } from "../update/_feed_server.ts";

const TOR_FIXTURE = new URL("../../fixtures/feeds/tor_bulk_exit_list.txt", import.meta.url);

Deno.test("the data version: the same for the same data, new with every install that changes it", async () => {
  const dataDir = await writeBaseDataDir();
  const feeds = await Deno.makeTempDir({ prefix: "ipintel-version-" });
  try {
    const first = (await openDataSet(dataDir)).version;
    assert.match(first.id, /^[0-9a-f]{12}$/);
    assert.equal((await openDataSet(dataDir)).version.id, first.id, "stable across opens");

    await Deno.copyFile(TOR_FIXTURE, `${feeds}/tor.txt`);
    const tor: SourceSpec = {
      name: "tor-exits",
      kind: "tor",
      format: "ip-list",
      url: pathToFileURL(`${feeds}/tor.txt`).href,
      license: "test",
      attribution: "test",
    };
    await update(dataDir, [tor], { now: () => new Date("2026-11-20T10:00:00Z") });
    const withTor = (await openDataSet(dataDir)).version;
    assert.notEqual(withTor.id, first.id, "a list installed");
    assert.equal(withTor.installedAt, "2026-11-20T10:00:00.000Z");

    // A failed update rewrites the manifest (to record why) but changes no data.
    await Deno.remove(`${feeds}/tor.txt`);
    const failed = await update(dataDir, [tor]);
    assert.equal(failed.outcomes[0]!.status, "failed");
    assert.equal((await openDataSet(dataDir)).version.id, withTor.id, "same data, same id");

    // The same list with other content: a new id.
    const lines = (await Deno.readTextFile(TOR_FIXTURE)).trimEnd().split("\n");
    await Deno.writeTextFile(`${feeds}/tor.txt`, lines.slice(0, 20).join("\n") + "\n");
    await update(dataDir, [tor], { now: () => new Date("2026-11-21T10:00:00Z") });
    const changed = (await openDataSet(dataDir)).version;
    assert.notEqual(changed.id, withTor.id);
    assert.equal(changed.installedAt, "2026-11-21T10:00:00.000Z");
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(feeds, { recursive: true });
  }
});

Deno.test("dataVersion() counts what changes answers: files, list contents, provider, minimum count", () => {
  const manifest: Manifest = {
    sources: [{
      name: "aws",
      kind: "hosting",
      file: "feeds/hosting-aaaaaaaaaaaa.mmdb",
      sha256: "a".repeat(64),
      source: "https://example.com/aws.json",
      license: "x",
      attribution: "x",
      built: "2026-11-20T10:00:00.000Z",
      databaseType: "ipintel-hosting",
      provider: "Amazon Web Services",
      download: { file: "feeds/aws-bbbbbbbbbbbb.txt", sha256: "b".repeat(64), fetched: "" },
    }],
  };
  const id = dataVersion(manifest).id;
  const other = (change: (m: Manifest) => void) => {
    const copy = structuredClone(manifest);
    change(copy);
    return dataVersion(copy).id;
  };
  assert.notEqual(other((m) => m.sources[0]!.sha256 = "c".repeat(64)), id);
  assert.notEqual(other((m) => m.sources[0]!.download!.sha256 = "c".repeat(64)), id);
  assert.notEqual(other((m) => m.sources[0]!.provider = "AWS"), id);
  assert.notEqual(other((m) => m.sources = []), id);
  assert.equal(other((m) => m.failures = { aws: { reason: "x", at: "y" } }), id);
  assert.equal(other((m) => m.sources[0]!.license = "y"), id, "a licence text answers nothing");
  const operator = {
    variable: "IPINTEL_CITY_DB",
    path: "/srv/city.mmdb",
    size: 100,
    databaseType: "GeoIP2-City",
    buildEpoch: "2026-11-01T00:00:00.000Z",
    nodeCount: 10,
  };
  assert.notEqual(dataVersion(manifest, [operator]).id, id, "an operator's database counts");
  assert.notEqual(
    dataVersion(manifest, [{ ...operator, buildEpoch: "2026-11-08T00:00:00.000Z" }]).id,
    dataVersion(manifest, [operator]).id,
    "a new release of it too",
  );
});
