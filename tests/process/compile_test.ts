/**
 * The single binary, built by `deno task compile` and run as a user runs it:
 * it serves an `/ip` answer, answers `lookup`, builds data in its worker, and
 * keeps its KV in the working directory (its embedded data is read-only).
 *
 * Building needs Deno's runtime for `deno compile` (denort): DENORT_BIN naming
 * it, or a network that reaches Deno's release server. Where neither is there
 * (these machines: closed network, and no registry ships denort), the test is
 * ignored with that reason in its name.
 */

import assert from "node:assert/strict";
import { ignoredName } from "../_skip.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Why the binary cannot be built here, or null when it can. */
async function cannotCompile(): Promise<string | null> {
  const denort = Deno.env.get("DENORT_BIN");
  if (denort) {
    // The full `deno` binary as DENORT_BIN builds a file that runs as the deno CLI, not the app.
    return denort === Deno.execPath() ? "DENORT_BIN names deno itself, not denort" : null;
  }
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/probe.ts`, "console.log('ok');\n");
    const probe = await new Deno.Command(Deno.execPath(), {
      args: ["compile", "--output", `${dir}/probe`, `${dir}/probe.ts`],
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(60_000),
    }).output().catch(() => null);
    return probe?.success ? null : "deno compile cannot download its runtime (denort) here";
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const reason = await cannotCompile();

Deno.test({
  name: ignoredName(
    "the single binary serves /ip, answers lookup, builds data in its worker, keeps its KV beside it",
    reason,
  ),
  ignore: reason !== null,
  async fn() {
    const task = await new Deno.Command(Deno.execPath(), {
      args: ["task", "compile"],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(task.success, new TextDecoder().decode(task.stderr));
    const binary = `${ROOT}dist/ipintel`;
    const work = await Deno.makeTempDir();
    const env = { IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" };
    try {
      const lookup = await new Deno.Command(binary, {
        args: ["lookup", "8.8.8.8", "--get", "countryCode,asn_number"],
        cwd: work,
        env,
        stdout: "piped",
      }).output();
      assert.ok(lookup.success);
      assert.deepEqual(JSON.parse(new TextDecoder().decode(lookup.stdout)), {
        ip: "8.8.8.8",
        countryCode: "US",
        asn_number: 15169,
      });

      const data = await new Deno.Command(binary, {
        args: ["data", "--data-dir", `${work}/data`],
        cwd: work,
        env,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(data.success, new TextDecoder().decode(data.stderr));
      await Deno.stat(`${work}/data/manifest.json`);

      const server = new Deno.Command(binary, {
        args: ["serve", "--port", "0", "--workers", "1"],
        cwd: work,
        env,
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      try {
        const reader = server.stderr.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        let port = 0;
        while (port === 0) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`the binary stopped: ${text}`);
          text += value;
          port = Number(/listening on https?:\/\/[^:]+:(\d+)/.exec(text)?.[1] ?? 0);
        }
        reader.releaseLock();
        const answer = await fetch(`http://127.0.0.1:${port}/ip/8.8.8.8?get=countryCode`);
        assert.equal(answer.status, 200);
        assert.equal((await answer.json()).data.countryCode, "US");
        // The embedded data is read-only: the KV is made in the working directory.
        await Deno.stat(`${work}/ipintel.kv`);
      } finally {
        server.kill("SIGTERM");
        await server.status;
        await server.stdout.cancel();
        await server.stderr.cancel().catch(() => {});
      }
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  },
});
