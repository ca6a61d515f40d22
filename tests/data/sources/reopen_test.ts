/**
 * A data set reopened while the previous one is held (a reload after a feed
 * update), with the same VerifiedFileCache, takes the unchanged files' verified
 * bytes from it instead of reading and hashing them again on the isolate that
 * serves; a file changed on disk is read and checked again. Without the cache
 * (or with another), every open reads its files.
 */

import assert from "node:assert/strict";
import { openDataSet, VerifiedFileCache } from "../../../src/data/sources/data_set.ts";
import { sha256Hex } from "../../../src/data/sources/manifest.ts";
import { writeFixtureDataDir } from "../../_helpers.ts";

/** The fixture data directory with each file's sha256 in its manifest, as an install writes it. */
async function hashedDataDir(): Promise<string> {
  const dir = await writeFixtureDataDir();
  const manifest = JSON.parse(await Deno.readTextFile(`${dir}/manifest.json`));
  for (const entry of manifest.sources) {
    entry.sha256 = await sha256Hex(await Deno.readFile(`${dir}/${entry.file}`));
  }
  await Deno.writeTextFile(`${dir}/manifest.json`, JSON.stringify(manifest));
  return dir;
}

Deno.test("a reopened data set uses the verified bytes the held one has; a file changed on disk is read again", async () => {
  const dir = await hashedDataDir();
  try {
    const city = `${dir}/city.mmdb`;
    const verifiedFiles = new VerifiedFileCache();
    const first = await openDataSet(dir, { share: true, verifiedFiles });
    const again = await openDataSet(dir, { share: true, verifiedFiles });
    assert.equal(again.files!.files.get(city)!.bytes, first.files!.files.get(city)!.bytes);
    for (const options of [{}, { verifiedFiles: new VerifiedFileCache() }]) {
      const alone = await openDataSet(dir, { share: true, ...options });
      assert.notEqual(alone.files!.files.get(city)!.bytes, first.files!.files.get(city)!.bytes);
    }
    // Rewritten (same bytes, a new modification time): read and checked again.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await Deno.writeFile(city, await Deno.readFile(city));
    const third = await openDataSet(dir, { share: true, verifiedFiles });
    assert.notEqual(third.files!.files.get(city)!.bytes, first.files!.files.get(city)!.bytes);
    assert.deepEqual(third.files!.files.get(city)!.bytes, first.files!.files.get(city)!.bytes);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
