/**
 * Safe defaults: serving a non-loopback address while auth resolves to off
 * (IPINTEL_AUTH unset, no key yet: a fresh volume, a moved data directory)
 * stops at start with exit 2 and says how to create a key; an explicit
 * IPINTEL_AUTH=off, or a key, lets it serve.
 */

import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../_helpers.ts";
import { waitFor } from "../_serve_process.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** `ipintel <args>` with `env`: stops it once `ready` matches its stderr (or it exits); exit status and stderr. */
async function run(args: string[], env: Record<string, string>, ready = /data loaded/) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  let exited = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const stdout = new Response(child.stdout).text();
  const status = child.status.finally(() => exited = true);
  try {
    await waitFor(() => exited || ready.test(stderr), 30_000);
  } finally {
    if (!exited) child.kill("SIGTERM");
  }
  const { code } = await status;
  await reading;
  return { code, stderr, stdout: await stdout };
}

Deno.test("serving 0.0.0.0 with no key and IPINTEL_AUTH unset: exit 2 saying how to create a key", async () => {
  const dataDir = await writeFixtureDataDir();
  const kv = `${dataDir}/test.kv`;
  const env = { IPINTEL_DATA_DIR: dataDir, IPINTEL_KV: kv, IPINTEL_WORKERS: "2" };
  const serve = ["serve", "--host", "0.0.0.0", "--port", "0"];
  try {
    const refused = await run(serve, env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /Refusing to serve 0\.0\.0\.0 without API keys/);
    assert.match(refused.stderr, /keys create --name NAME/);
    assert.match(refused.stderr, /IPINTEL_AUTH=off/);
    assert.doesNotMatch(refused.stderr, /listening on/);

    // Asked for on purpose: it serves, with the warning.
    const open = await run(serve, { ...env, IPINTEL_AUTH: "off" });
    assert.equal(open.code, 0, open.stderr);
    assert.match(open.stderr, /listening on http:\/\/0\.0\.0\.0:\d+/);
    assert.match(open.stderr, /WARNING: listening on 0\.0\.0\.0 with auth off/);

    // With a key, unset resolves to required: it serves.
    const created = await run(["keys", "create", "--name", "ops"], env, /(?!)/);
    assert.equal(created.code, 0, created.stderr);
    const keyed = await run(serve, env);
    assert.equal(keyed.code, 0, keyed.stderr);
    assert.match(keyed.stderr, /ipintel: auth required/);
    console.log(
      `  0.0.0.0, no key, IPINTEL_AUTH unset: exit ${refused.code}, "${
        refused.stderr.trim().split("\n").at(-1)
      }"`,
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
