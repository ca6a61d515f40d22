import assert from "node:assert/strict";
import { fetchFresh, startServe, waitFor } from "../../_serve_process.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";
import { runCli } from "../../_cli.ts";

// `ipintel keys ...` and `ipintel serve` as a user runs them, sharing one KV file.

function cli(kv: string, ...args: string[]) {
  return runCli(args, { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv, NO_COLOR: "1" });
}

Deno.test("keys create --json prints the key once; list never shows it; revoke and rotate work", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-keys-" });
  const kv = `${dir}/keys.kv`;
  try {
    const created = await cli(
      kv,
      "keys",
      "create",
      "--name",
      "acme",
      "--limit",
      "10",
      "--window",
      "30",
      "--json",
    );
    assert.equal(created.code, 0, created.stderr);
    const issued = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(issued), ["id", "name", "key", "limit", "window"]);
    assert.deepEqual([issued.name, issued.limit, issued.window], ["acme", 10, 30]);
    assert.match(issued.key, /^ipi_/);

    const listed = await cli(kv, "keys", "list", "--json");
    assert.equal(listed.code, 0, listed.stderr);
    const records = listed.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(records.map((r) => [r.id, r.name, r.revoked]), [[issued.id, "acme", false]]);
    const human = await cli(kv, "keys", "list");
    for (const text of [listed.stdout, human.stdout, human.stderr]) {
      assert.ok(!text.includes(issued.key), "list never prints a key");
      assert.ok(!text.includes("hash"), "nor its hash");
    }

    const rotated = await cli(kv, "keys", "rotate", issued.id, "--json");
    const newKey = JSON.parse(rotated.stdout);
    assert.equal(newKey.id, issued.id);
    assert.notEqual(newKey.key, issued.key);

    const revoked = await cli(kv, "keys", "revoke", issued.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /Revoked API key/);
    const after = JSON.parse((await cli(kv, "keys", "list", "--json")).stdout);
    assert.equal(after.revoked, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys subcommands refuse unknown flags, missing values and unknown ids", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-keys-" });
  const kv = `${dir}/keys.kv`;
  try {
    const cases: [string[], RegExp][] = [
      [["keys", "create", "--nme", "x"], /--nme/],
      [["keys", "create"], /needs --name/],
      [["keys", "create", "--name", "x", "--limit", "-3"], /--limit/],
      [["keys", "revoke", "nope"], /No API key with id "nope"/],
      [["keys", "rotate"], /Missing argument/],
      [["keys", "frobnicate"], /Unknown command "frobnicate"/],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await cli(kv, ...args);
      assert.notEqual(code, 0, args.join(" "));
      assert.match(stderr, message, args.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a running server follows the CLI: the first key turns auth on, a revoked key is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-serve-" });
  const kv = `${dir}/keys.kv`;
  const server = await startServe({
    IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
    IPINTEL_KV: kv,
    NO_COLOR: "1",
  });
  let key = "";
  try {
    assert.match(server.stderr(), /auth off \(no API keys yet/);
    const port = server.port;
    const url = `http://127.0.0.1:${port}/ip/8.8.8.8`;
    const status = async (headers: Record<string, string> = {}) => {
      const response = await fetch(url, { headers });
      await response.body?.cancel();
      return response;
    };
    assert.equal((await status()).status, 200, "no keys yet: open");

    const issued = JSON.parse((await cli(kv, "keys", "create", "--name", "acme", "--json")).stdout);
    key = issued.key;
    // The server polls the KV every second.
    await waitFor(() => server.stderr().includes("auth now required"));
    // Each worker polls the KV on its own (within a second): wait until ten new
    // connections in a row, whichever worker each reaches, are refused.
    await until(async () => {
      for (let i = 0; i < 10; i++) if ((await fetchFresh(url)).status !== 401) return false;
      return true;
    }, "every worker to require a key");
    const keyed = await status({ "x-api-key": key });
    assert.equal(keyed.status, 200);
    assert.equal(keyed.headers.get("ratelimit-limit"), "1000");

    await cli(kv, "keys", "revoke", issued.id);
    // Within the poll interval the revocation reaches every worker.
    await until(async () => {
      for (let i = 0; i < 10; i++) {
        const response = await fetchFresh(url, { headers: { "x-api-key": key } });
        if (response.status !== 401) return false;
      }
      return true;
    }, "the revocation to reach every worker");
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
  assert.ok(key !== "" && !server.stderr().includes(key), "the server never logs a key");
});

/** Polls `check` every 50 ms until it holds; fails after 10 s naming what never happened. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("keys list shows each key's use and last use; keys set changes limits; keys delete removes a revoked key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-keys-use-" });
  const kv = `${dir}/keys.kv`;
  const issued = JSON.parse(
    (await cli(kv, "keys", "create", "--name", "acme", "--limit", "5", "--window", "60", "--json"))
      .stdout,
  );
  const idle = JSON.parse((await cli(kv, "keys", "create", "--name", "idle", "--json")).stdout);
  const server = await startServe({ IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv });
  try {
    const url = `http://127.0.0.1:${server.port}/ip/8.8.8.8`;
    const get = (key: string) => fetchFresh(url, { headers: { "x-api-key": key } });
    const before = Date.now();
    for (let i = 0; i < 3; i++) assert.equal((await get(issued.key)).status, 200);
    const listed = async () =>
      new Map(
        (await cli(kv, "keys", "list", "--json")).stdout.trim().split("\n")
          .map((line) => JSON.parse(line)).map((r) => [r.id, r]),
      );
    // The counts reach the KV within a sync (0.25 s).
    await until(async () => (await listed()).get(issued.id)?.used === 3, "3 uses in the list");
    const rows = await listed();
    const row = rows.get(issued.id);
    assert.deepEqual([row.used, row.limit, row.window], [3, 5, 60]);
    const last = Date.parse(row.lastUsed);
    assert.ok(last >= before - 1000 && last <= Date.now(), row.lastUsed);
    assert.deepEqual([rows.get(idle.id).used, rows.get(idle.id).lastUsed], [0, null]);
    const human = await cli(kv, "keys", "list");
    assert.match(human.stdout, new RegExp(`${issued.id} .*used 3 of 5 in 60 s  last used 20`));

    // A lower limit, same secret: the server applies it (polls every second).
    const set = await cli(kv, "keys", "set", issued.id, "--limit", "3");
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /3 \/ 60 s/);
    // Each worker polls on its own: wait until ten new connections in a row see the new limit.
    await until(async () => {
      for (let i = 0; i < 10; i++) {
        const response = await get(issued.key);
        if (response.status !== 429 || response.headers.get("ratelimit-limit") !== "3") {
          return false;
        }
      }
      return true;
    }, "the new limit on every worker");
    const raised = await cli(kv, "keys", "set", issued.id, "--limit", "default");
    assert.equal(raised.code, 0, raised.stderr);
    await until(async () => (await get(issued.key)).status === 200, "the default limit");

    const active = await cli(kv, "keys", "delete", issued.id);
    assert.equal(active.code, 1, "the command failed: not a usage error");
    assert.match(active.stderr, /is active: revoke it first/);
    await cli(kv, "keys", "revoke", issued.id);
    await cli(kv, "keys", "revoke", idle.id);
    const deleted = await cli(kv, "keys", "delete", issued.id);
    assert.equal(deleted.code, 0, deleted.stderr);
    await cli(kv, "keys", "delete", idle.id);
    assert.equal((await cli(kv, "keys", "list", "--json")).stdout.trim(), "");
    assert.match((await cli(kv, "keys", "delete", issued.id)).stderr, /No API key with id/);
    // Deleting the last key does not open the API: keys were in use here.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await fetchFresh(url)).status, 401);
    assert.equal((await get(issued.key)).status, 401);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys list shows the limit and window the server enforces, not the CLI's defaults", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-keys-default-" });
  const kv = `${dir}/keys.kv`;
  try {
    const plain = JSON.parse((await cli(kv, "keys", "create", "--name", "plain", "--json")).stdout);
    const own = JSON.parse(
      (await cli(kv, "keys", "create", "--name", "own", "--limit", "7", "--json")).stdout,
    );
    // No server has started on this KV: the CLI does not know the server's limit, and says so.
    const before = await cli(kv, "keys", "list");
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, new RegExp(`${plain.id} .*used 0 of the server default in 60 s`));
    assert.match(before.stdout, new RegExp(`${own.id} .*used 0 of 7 in 60 s`));

    const server = await startServe({
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_KV: kv,
      IPINTEL_RATE_LIMIT: "3",
      IPINTEL_RATE_WINDOW: "30",
    });
    try {
      const url = `http://127.0.0.1:${server.port}/ip/8.8.8.8`;
      const get = () => fetchFresh(url, { headers: { "x-api-key": plain.key } });
      for (let i = 0; i < 3; i++) assert.equal((await get()).status, 200);
      assert.equal((await get()).status, 429, "the server enforces 3");
      const rows = async () =>
        new Map(
          (await cli(kv, "keys", "list", "--json")).stdout.trim().split("\n")
            .map((line) => JSON.parse(line)).map((r) => [r.id, r]),
        );
      await until(async () => (await rows()).get(plain.id)?.used === 3, "3 uses in the list");
      const listed = await rows();
      const row = listed.get(plain.id);
      assert.deepEqual([row.used, row.limit, row.window], [3, 3, 30]);
      assert.deepEqual([row.serverDefaults.limit, row.serverDefaults.window], [3, 30]);
      assert.deepEqual([listed.get(own.id).limit, listed.get(own.id).window], [7, 30]);
      // The CLI's own defaults (1000 in 60 s here) are not what the server enforces.
      const human = await cli(kv, "keys", "list");
      assert.match(human.stdout, new RegExp(`${plain.id} .*used 3 of 3 in 30 s  last used 20`));
      assert.match(human.stdout, new RegExp(`${own.id} .*used 0 of 7 in 30 s`));
    } finally {
      await server.kill();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys: an unknown id or an active key to delete exits 1 (the command failed), a usage error 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-keys-exit-" });
  const kv = `${dir}/keys.kv`;
  try {
    const issued = JSON.parse((await cli(kv, "keys", "create", "--name", "a", "--json")).stdout);
    const cases: [string[], number, RegExp][] = [
      [["keys", "set", "nosuchid", "--limit", "5"], 1, /No API key with id "nosuchid"/],
      [["keys", "revoke", "nosuchid"], 1, /No API key with id "nosuchid"/],
      [["keys", "rotate", "nosuchid"], 1, /No API key with id "nosuchid"/],
      [["keys", "delete", "nosuchid"], 1, /No API key with id "nosuchid"/],
      [["keys", "delete", issued.id], 1, /is active: revoke it first/],
      [["keys", "set", issued.id], 2, /needs --limit <n>, --window <seconds> or both/],
      [["keys", "set", issued.id, "--limit", "x"], 2, /Invalid --limit "x"/],
      [["keys", "create"], 2, /needs --name/],
      [["keys", "revoke"], 2, /Missing argument/],
    ];
    for (const [args, expected, message] of cases) {
      const { code, stderr } = await cli(kv, ...args);
      assert.equal(code, expected, `${args.join(" ")}: ${stderr}`);
      assert.match(stderr, message, args.join(" "));
      if (expected === 1) assert.equal(stderr.trim().split("\n").length, 1, `one line: ${stderr}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys set and create succeed while a running server and another writer keep the KV busy", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-keys-busy-" });
  const kv = `${dir}/keys.kv`;
  const issued = JSON.parse(
    (await cli(kv, "keys", "create", "--name", "busy", "--limit", "0", "--json")).stdout,
  );
  const server = await startServe({ IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv });
  // Requests all along: the server writes its counts to the KV every 0.25 s.
  let busy = true;
  const load = (async () => {
    const url = `http://127.0.0.1:${server.port}/ip/8.8.8.8`;
    while (busy) await fetchFresh(url, { headers: { "x-api-key": issued.key } });
  })();
  // And a writer flat out, as a second server on the same file: a read-check-write of the
  // command then meets "database is locked" at once (SQLite does not wait for it), every run.
  const other = await Deno.openKv(kv);
  let conflicts = 0;
  const writer = (async () => {
    while (busy) {
      try {
        const entry = await other.get(["test", "busy"]);
        await other.atomic().check(entry).set(["test", "busy"], crypto.randomUUID()).commit();
      } catch (error) {
        if (!/database is locked/.test(String(error))) throw error;
        conflicts++;
      }
    }
  })();
  try {
    for (const limit of ["100", "200", "300"]) {
      const set = await cli(kv, "keys", "set", issued.id, "--limit", limit);
      assert.equal(set.code, 0, set.stderr);
      assert.equal(set.stderr, "", "a wait that ends well is not reported");
    }
    const created = await cli(kv, "keys", "create", "--name", "second");
    assert.equal(created.code, 0, created.stderr);
    console.log(`the other writer met a busy KV ${conflicts} times`);
  } finally {
    busy = false;
    await load.catch(() => {});
    await writer;
    other.close();
    await server.stop();
  }
  const listed = (await cli(kv, "keys", "list", "--json")).stdout.trim().split("\n")
    .map((line) => JSON.parse(line));
  assert.deepEqual(listed.map((r) => r.name), ["busy", "second"]);
  assert.equal(listed[0].limit, 300);
  await Deno.remove(dir, { recursive: true });
});
