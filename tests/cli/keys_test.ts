import assert from "node:assert/strict";
import { DEFAULT_DATA_DIR } from "../_helpers.ts";

// `ipintel keys ...` and `ipintel serve` as a user runs them, sharing one KV file.

const ROOT = new URL("../..", import.meta.url);

async function cli(kv: string, ...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env: { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
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
      [["keys", "rotate"], /Expected one key id/],
      [["keys", "frobnicate"], /Unknown keys subcommand "frobnicate"/],
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

Deno.test("a server on the CLI's KV says its auth mode, refuses keyless calls and serves the key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-cli-serve-" });
  const kv = `${dir}/keys.kv`;
  const created = await cli(kv, "keys", "create", "--name", "acme", "--json");
  const { key } = JSON.parse(created.stdout);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "serve", "--port", "0"],
    cwd: ROOT,
    env: { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv, NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  try {
    while (!log.includes("data loaded")) {
      const { value, done } = await lines.read();
      if (done) break;
      log += value;
    }
    assert.match(log, /auth required/);
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log)?.[1]);
    assert.ok(port > 0, log);
    const keyless = await fetch(`http://127.0.0.1:${port}/ip/8.8.8.8`);
    assert.equal(keyless.status, 401);
    await keyless.body?.cancel();
    const keyed = await fetch(`http://127.0.0.1:${port}/ip/8.8.8.8`, {
      headers: { "x-api-key": key },
    });
    assert.equal(keyed.status, 200);
    assert.equal(keyed.headers.get("ratelimit-limit"), "1000");
    assert.equal((await keyed.json()).data.connection.asn_number, 15169);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await lines.cancel();
    await Deno.remove(dir, { recursive: true });
  }
  assert.ok(!log.includes(key), "the server never logs a key");
});
