/**
 * Broken databases: a record that is not a map is refused when the source is loaded,
 * naming the source; a corrupt pointer inside a record fails only the lookups that
 * reach it (500 with the generic message, the reason in the log; in a CLI batch, an
 * error line for that address while the others are answered).
 */

import assert from "node:assert/strict";
import { createServices } from "../../src/cli/services.ts";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/http/app.ts";
import { CorruptRecordError } from "../../src/mmdb/reader.ts";
import { type MmdbValue, MmdbWriter } from "../../src/mmdb/writer/writer.ts";
import { openDataSet } from "../../src/sources/data_set.ts";
import { writeManifest } from "../../src/sources/manifest.ts";
import { mapRecord, rawMmdb } from "../mmdb/_raw.ts";
import { writeBaseDataDir } from "../update/_feed_server.ts";

const CITY = { country: { iso_code: "DE", names: { en: "Germany" } } };

function servicesWith(dataDir: string, cityDb: string) {
  const sources = `${dataDir}/sources.json`;
  Deno.writeTextFileSync(sources, '{"sources":[]}');
  return createServices(
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

Deno.test("a corrupt pointer: that lookup answers 500 with the generic message, the reason is logged", async () => {
  const dir = await writeBaseDataDir();
  try {
    const path = `${dir}/city.mmdb`;
    await Deno.writeFile(path, cityWithCorruptPointer());
    const services = { current: await servicesWith(dir, path) };
    const logged: unknown[] = [];
    const config = {
      bulkMax: 10,
      trustedProxies: [],
      forwardedHeader: "x-forwarded-for" as const,
      corsOrigins: ["*"],
    };
    const app = createApp({ services, config, logError: (error) => logged.push(error) });
    const env = { remoteAddr: { transport: "tcp" as const, hostname: "127.0.0.1", port: 1 } };
    for (const serve of [app.fetch]) {
      for (const path of ["/ip/1.2.3.4", "/ip/1.2.3.4?format=xml"]) {
        logged.length = 0;
        const response = await serve(
          new Request(`http://localhost${path}`, { headers: { host: "localhost" } }),
          env,
        );
        assert.equal(response.status, 500, path);
        const body = await response.text();
        assert.match(body, /Internal server error/, path);
        assert.doesNotMatch(body, /offset|city\.mmdb/, path);
        assert.equal(logged.length, 1, `${path}: one logged reason`);
        assert.ok(logged[0] instanceof CorruptRecordError);
        assert.match(
          (logged[0] as Error).message,
          /Corrupt record in .*city\.mmdb at data offset 0/,
        );
      }
      // In a bulk call the whole call fails once (no half answer), logged once.
      logged.length = 0;
      const bulk = await serve(
        new Request("http://localhost/bulk/5.6.7.8,1.2.3.4,5.6.7.9", {
          headers: { host: "localhost" },
        }),
        env,
      );
      assert.equal(bulk.status, 500);
      assert.equal(logged.length, 1);
      // The rest of the database still answers.
      const ok = await serve(
        new Request("http://localhost/ip/5.6.7.8", { headers: { host: "localhost" } }),
        env,
      );
      assert.equal(ok.status, 200);
      assert.equal((await ok.json()).data.connection.asn_number, 64500);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a corrupt pointer never stops a CLI batch: an error line, the rest answered, exit 1", async () => {
  const dir = await writeBaseDataDir();
  try {
    const path = `${dir}/city.mmdb`;
    await Deno.writeFile(path, cityWithCorruptPointer());
    await Deno.writeTextFile(`${dir}/sources.json`, '{"sources":[]}');
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "main.ts",
        "lookup",
        "5.6.7.8",
        "1.2.3.4",
        "5.6.7.9",
        "--get",
        "asn_number",
      ],
      cwd: new URL("../..", import.meta.url),
      env: {
        IPINTEL_DATA_DIR: dir,
        IPINTEL_SOURCES: `${dir}/sources.json`,
        IPINTEL_CITY_DB: path,
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout).trim().split("\n");
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 1, stderr);
    assert.deepEqual(stdout.map((line) => JSON.parse(line).ip), ["5.6.7.8", "5.6.7.9"]);
    assert.match(stderr, /Lookup of "1\.2\.3\.4" failed: Corrupt record in .*city\.mmdb/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
