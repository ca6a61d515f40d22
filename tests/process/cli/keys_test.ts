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
    assert.equal(active.code, 2);
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
