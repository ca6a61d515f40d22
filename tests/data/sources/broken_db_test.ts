/**
 * Broken databases: a record that is not a map, or a corrupt pointer inside a record,
 * is refused when the source is loaded, naming the source (strict decoding: see
 * tests/data/sources/verify_data_test.ts for each rule).
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { openServed } from "../../../src/process/server/served.ts";
import { loadConfig } from "../../../src/base/config.ts";
import { type MmdbValue, MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { writeManifest } from "../../../src/data/sources/manifest.ts";
import { VERIFIER_VERSION } from "../../../src/data/sources/verify_mmdb.ts";
import { mapRecord, rawMmdb } from "../mmdb/_raw.ts";
import { writeBaseDataDir } from "../update/_feed_server.ts";

const CITY = { country: { iso_code: "DE", names: { en: "Germany" } } };

function servicesWith(dataDir: string, cityDb: string) {
  const sources = `${dataDir}/sources.json`;
  Deno.writeTextFileSync(sources, '{"sources":[]}');
  return openServed(
    loadConfig({ IPINTEL_DATA_DIR: dataDir, IPINTEL_SOURCES: sources, IPINTEL_CITY_DB: cityDb }),
  );
}

function cityWith(extra: MmdbValue): Uint8Array {
  const writer = new MmdbWriter({ databaseType: "GeoLite2-City" });
  writer.insertNetwork("81.2.69.0/24", CITY);
  // Not one of the addresses the load-time sample decodes.
  writer.insertNetwork("203.0.113.0/24", extra);
  return writer.toBytes();
}

Deno.test("a City record that is a string or an array is refused at load, naming the file", async () => {
  const dir = await writeBaseDataDir();
  try {
    for (
      const [extra, what] of [["just text", "a utf8_string"], [[1, "two"], "an array"]] as const
    ) {
      const path = `${dir}/city.mmdb`;
      await Deno.writeFile(path, cityWith(extra as MmdbValue));
      await assert.rejects(
        servicesWith(dir, path),
        (error: Error) =>
          error.message.includes(`IPINTEL_CITY_DB "${path}"`) &&
          error.message.includes(`${what}, not a map`),
        what,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an installed source or feed whose records are not maps is refused, naming it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-broken-" });
  try {
    const asn = new MmdbWriter({ databaseType: "GeoLite2-ASN" });
    asn.insertNetwork("9.9.9.0/24", { autonomous_system_number: 19281 });
    const tor = new MmdbWriter({ databaseType: "ipintel-tor" });
    tor.insertNetwork("185.220.101.0/24", ["tor"]);
    await Deno.writeFile(`${dir}/asn.mmdb`, asn.toBytes());
    await Deno.writeFile(`${dir}/tor.mmdb`, tor.toBytes());
    const entry = { sha256: "", source: "test", license: "test", attribution: "test" };
    const asnEntry = {
      ...entry,
      name: "asn",
      kind: "asn" as const,
      file: "asn.mmdb",
      built: "2026-01-01T00:00:00.000Z",
      databaseType: "GeoLite2-ASN",
    };
    await writeManifest(dir, { sources: [asnEntry] });
    await openDataSet(dir); // the ASN database alone is fine
    await writeManifest(dir, {
      sources: [asnEntry, {
        ...asnEntry,
        name: "tor-exits",
        kind: "tor" as const,
        file: "tor.mmdb",
        databaseType: "ipintel-tor",
      }],
    });
    await assert.rejects(openDataSet(dir), /tor feeds .*tor\.mmdb: .*an array, not a map/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** City file: 1.2.3.0/24 holds a map whose value points past the data section. */
function cityWithCorruptPointer(): Uint8Array {
  const corrupt = [0xe1, 0x41, 0x61, 0x27, 0xff]; // { a: pointer to 0x7ff }
  const good = mapRecord("fine");
  return rawMmdb({
    ipVersion: 6,
    databaseType: "GeoLite2-City",
    networks: [{ network: "1.2.3.0/24", offset: 0 }, {
      network: "5.6.7.0/24",
      offset: corrupt.length,
    }],
    data: new Uint8Array([...corrupt, ...good]),
  });
}

Deno.test("a corrupt pointer inside a record is refused at load, naming the file and the offset", async () => {
  const dir = await writeBaseDataDir();
  try {
    const path = `${dir}/city.mmdb`;
    await Deno.writeFile(path, cityWithCorruptPointer());
    await assert.rejects(
      servicesWith(dir, path),
      (error: Error) =>
        error.message.includes(`IPINTEL_CITY_DB "${path}"`) &&
        /data section offset 3: a pointer to 2047, past the end/.test(error.message),
    );
    // The CLI refuses it the same way, before answering anything.
    await Deno.writeTextFile(`${dir}/sources.json`, '{"sources":[]}');
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts", "lookup", "5.6.7.8", "--get", "asn_number"],
      cwd: new URL("../../..", import.meta.url),
      env: {
        IPINTEL_DATA_DIR: dir,
        IPINTEL_SOURCES: `${dir}/sources.json`,
        IPINTEL_CITY_DB: path,
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.notEqual(output.code, 0, stderr);
    assert.equal(new TextDecoder().decode(output.stdout), "");
    assert.match(stderr, /a pointer to 2047, past the end/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A data dir whose manifest lists `bytes` as its City database, with their true sha256. */
async function installedCity(bytes: Uint8Array, verifier?: number): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-installed-" });
  await Deno.writeFile(`${dir}/city.mmdb`, bytes);
  await writeManifest(dir, {
    sources: [{
      name: "city",
      kind: "city",
      file: "city.mmdb",
      sha256: createHash("sha256").update(bytes).digest("hex"),
      source: "test",
      license: "test",
      attribution: "test",
      built: "2026-01-01T00:00:00.000Z",
      databaseType: "GeoLite2-City",
      ...(verifier === undefined ? {} : { verifier }),
    }],
  });
  return dir;
}

Deno.test("an installed database no installer checked with these checks is checked again at open", async () => {
  // Its bytes match the manifest, but the entry names no (or an older) verifier.
  for (const verifier of [undefined, VERIFIER_VERSION - 1]) {
    const dir = await installedCity(cityWithCorruptPointer(), verifier);
    try {
      await assert.rejects(openDataSet(dir), /city\.mmdb: .*a pointer to 2047, past the end/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("a database the installer checked is refused at open once its bytes changed", async () => {
  const dir = await installedCity(
    cityWith({ city: { names: { en: "Berlin" } } }),
    VERIFIER_VERSION,
  );
  try {
    await openDataSet(dir); // as installed: opened without walking it again
    await Deno.writeFile(`${dir}/city.mmdb`, cityWithCorruptPointer());
    await assert.rejects(
      openDataSet(dir),
      /city\.mmdb does not match the sha256 in manifest\.json/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
