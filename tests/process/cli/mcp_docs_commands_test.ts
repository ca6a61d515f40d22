/**
 * docs/mcp.md's commands run as written: the key made as the page says
 * (`keys create --name analyst`), the stdio session piped into `ipintel mcp`,
 * and the curl call to a real server's `/mcp` with that key. `deno task
 * ipintel` becomes `deno run -A main.ts`; the page's host and key become the
 * test server's.
 */

import assert from "node:assert/strict";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";
import { startServe } from "../../_serve_process.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const PAGE = await Deno.readTextFile(`${ROOT}docs/mcp.md`);

/** The page's fenced `sh` blocks, in order. */
const SH = [...PAGE.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

/** Runs `command` in bash with the real CLI, in `env`; its exit code and output. */
async function sh(command: string, env: Record<string, string>) {
  const script = command.replaceAll(
    /deno task (-q )?ipintel/g,
    `"${Deno.execPath()}" run -A "${ROOT}main.ts"`,
  );
  const out = await new Deno.Command("bash", {
    args: ["-o", "pipefail", "-c", script],
    env: {
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_UPDATE_INTERVAL: "off",
      NO_COLOR: "1",
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** The tool result of the JSON-RPC answer with `id` among `lines` (one message a line). */
function toolText(lines: string, id: number): string {
  const answers = lines.trim().split("\n").map((line) => JSON.parse(line));
  const answer = answers.find((a) => a.id === id);
  assert.ok(answer, `an answer with id ${id} in ${lines}`);
  assert.equal(answer.result?.isError ?? false, false, JSON.stringify(answer));
  return answer.result.content[0].text;
}

Deno.test("docs/mcp.md: the stdio session piped into ipintel mcp answers lookup_ip and exits 0", async () => {
  const stdio = SH.find((block) => /\|\s*\n\s*deno task ipintel mcp\s*$/.test(block));
  assert.ok(stdio, "the page pipes a session into deno task ipintel mcp");
  const run = await sh(stdio, {});
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(toolText(run.stdout, 2)), {
    ip: "8.8.8.8",
    country: "United States",
  });
});

Deno.test("docs/mcp.md: keys create --name analyst makes the key the curl call to /mcp is answered with", async () => {
  const create = /`(deno task ipintel keys create[^`]*)`/.exec(PAGE)?.[1];
  assert.ok(create, "the page says how the key is made");
  const curl = SH.find((block) => block.startsWith("curl ") && block.includes("/mcp"));
  assert.ok(curl, "the page calls /mcp with curl");
  const dir = await Deno.makeTempDir({ prefix: "ipintel-mcp-docs-" });
  const kv = `${dir}/keys.kv`;
  try {
    const created = await sh(create, { IPINTEL_KV: kv });
    assert.equal(created.code, 0, created.stderr);
    const key = /\bipi_[\w-]+/.exec(created.stdout)?.[0];
    assert.ok(key, created.stdout);
    const server = await startServe({ IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv });
    try {
      const local = curl.replace("http://localhost:8000", `http://127.0.0.1:${server.port}`)
        .replace("ipi_your_key", key);
      const called = await sh(local, {});
      assert.equal(called.code, 0, called.stderr);
      assert.deepEqual(JSON.parse(toolText(called.stdout, 1)), {
        ip: "8.8.8.8",
        country: "United States",
      });
      // Without the key, the same call is refused with the scheme named.
      const keyless = await sh(
        local.replace(/ -H 'authorization: [^']*'/, "").trimEnd() + " -i",
        {},
      );
      assert.match(keyless.stdout, /^HTTP\/1\.1 401/);
      assert.match(keyless.stdout, /^www-authenticate: Bearer realm="ipintel"\r?$/im);
    } finally {
      await server.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
