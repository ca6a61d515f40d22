/**
 * What the service writes for itself is its user's alone, whatever the umask:
 * the KV (key names, hashes, limits, usage) and its SQLite side files 0600, a
 * data directory it creates 0700 and the update lock 0600; the systemd unit
 * sets UMask=0077 so every other file it writes follows.
 */

import assert from "node:assert/strict";
import { openKv } from "../../../src/process/server/kv.ts";
import { lockDataDir } from "../../../src/data/update/lock.ts";
import { ignoredName } from "../../_skip.ts";

const NO_MODES = Deno.build.os === "windows" ? "Windows files have no Unix modes" : null;

const UNIT = new URL("../../../deploy/ipintel.service", import.meta.url);

/** Runs `body` under the common default umask 022 (which would leave files 0644). */
async function underUmask022(body: () => Promise<void>): Promise<void> {
  const before = Deno.umask(0o022);
  try {
    await body();
  } finally {
    Deno.umask(before);
  }
}

async function mode(path: string): Promise<string> {
  return `0${((await Deno.stat(path)).mode! & 0o777).toString(8)}`;
}

Deno.test({
  name: ignoredName("a new KV file and its SQLite side files are created 0600", NO_MODES),
  ignore: NO_MODES !== null,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-perm-" });
    try {
      await underUmask022(async () => {
        const path = `${dir}/ipintel.kv`;
        const kv = await openKv({ kv: path, dataDir: `${dir}/data` });
        try {
          await kv.set(["probe"], "written");
          const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
          assert.ok(files.includes("ipintel.kv"), files.join(", "));
          for (const name of files) assert.equal(await mode(`${dir}/${name}`), "0600", name);
        } finally {
          kv.close();
        }
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: ignoredName("a data directory made by a writer is 0700, its lock file 0600", NO_MODES),
  ignore: NO_MODES !== null,
  fn: async () => {
    const parent = await Deno.makeTempDir({ prefix: "ipintel-perm-" });
    try {
      await underUmask022(async () => {
        const dataDir = `${parent}/data`;
        using _lock = await lockDataDir(dataDir, { purpose: "data", wait: false });
        assert.equal(await mode(dataDir), "0700");
        assert.equal(await mode(`${dataDir}/.lock`), "0600");
      });
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  },
});

Deno.test("the systemd unit keeps the service's files to its user (UMask=0077, state dir 0700)", async () => {
  const unit = await Deno.readTextFile(UNIT);
  const service = unit.slice(unit.indexOf("[Service]"), unit.indexOf("[Install]"));
  assert.match(service, /^UMask=0077$/m);
  assert.match(service, /^StateDirectoryMode=0700$/m);
});
