/**
 * HTTPS as an operator runs it: `ipintel serve` with IPINTEL_TLS_CERT and
 * IPINTEL_TLS_KEY refuses a bad pair at start, and serves a renewed
 * certificate without a restart, on both servers and every worker.
 */

import assert from "node:assert/strict";
import { TLS_POLL_MS } from "../../src/process/server/tls.ts";
import { makeCertificates, trustingFetch } from "../service/compat/_tls.ts";
import { DEFAULT_DATA_DIR } from "../_helpers.ts";
import { startServe, waitFor } from "../_serve_process.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Runs `serve` expecting it to refuse to start: its exit code and stderr (bounded wait). */
async function refusedStart(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "serve", "--port", "0"],
    cwd: ROOT,
    env: { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: ":memory:", NO_COLOR: "1", ...env },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const output = await child.output();
  clearTimeout(timer);
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("a bad certificate/key pair is refused at start, naming the file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-tls-" });
  try {
    const a = await makeCertificates(dir, "a");
    const b = await makeCertificates(dir, "b");
    await Deno.writeTextFile(`${dir}/garbage.pem`, "not a certificate\n");
    const cases: [Record<string, string>, RegExp][] = [
      [
        { IPINTEL_TLS_CERT: a.certFile, IPINTEL_TLS_KEY: b.keyFile },
        /IPINTEL_TLS_KEY ".*b\.key" is not the private key of the certificate in IPINTEL_TLS_CERT ".*a\.crt"/,
      ],
      [
        { IPINTEL_TLS_CERT: `${dir}/garbage.pem`, IPINTEL_TLS_KEY: a.keyFile },
        /IPINTEL_TLS_CERT ".*garbage\.pem" is not a PEM certificate/,
      ],
      [
        { IPINTEL_TLS_CERT: a.certFile, IPINTEL_TLS_KEY: `${dir}/garbage.pem` },
        /IPINTEL_TLS_KEY ".*garbage\.pem" is not a PEM private key/,
      ],
      [{ IPINTEL_TLS_CERT: a.certFile }, /IPINTEL_TLS_CERT \(--tls-cert\) and IPINTEL_TLS_KEY/],
      [
        { IPINTEL_TLS_CERT: `${dir}/missing.crt`, IPINTEL_TLS_KEY: a.keyFile },
        /Cannot read IPINTEL_TLS_CERT ".*missing\.crt"/,
      ],
    ];
    for (const [env, message] of cases) {
      const { code, stderr } = await refusedStart(env);
      assert.equal(code, 2, stderr);
      assert.match(stderr, message);
      assert.doesNotMatch(stderr, /listening/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const server of ["deno", "node"] as const) {
  Deno.test(`a renewed certificate is served without a restart (${server} server)`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-tls-" });
    const a = await makeCertificates(dir, "a");
    const b = await makeCertificates(dir, "b");
    const certFile = `${dir}/live.crt`;
    const keyFile = `${dir}/live.key`;
    await Deno.copyFile(a.certFile, certFile);
    await Deno.copyFile(a.keyFile, keyFile);
    const serve = await startServe({
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_KV: ":memory:",
      IPINTEL_HTTP_SERVER: server,
      IPINTEL_TLS_CERT: certFile,
      IPINTEL_TLS_KEY: keyFile,
    });
    /** Whether `fresh` new connections trusting `caPem` all get an answer (each may reach another worker). */
    const servesFor = async (caPem: string, fresh = 4) => {
      for (let i = 0; i < fresh; i++) {
        const client = trustingFetch(caPem);
        try {
          const response = await client.fetch(`https://localhost:${serve.port}/health`);
          await response.body?.cancel();
          if (response.status !== 200) return false;
        } catch {
          return false;
        } finally {
          client.close();
        }
      }
      return true;
    };
    try {
      assert.match(serve.stderr(), /listening on https:\/\/127\.0\.0\.1:/);
      assert.equal(await servesFor(a.caPem), true);
      assert.equal(await servesFor(b.caPem, 1), false);
      // Renewal: the key, then the certificate (a moment of mismatch is retried, not served).
      await Deno.copyFile(b.keyFile, keyFile);
      await Deno.copyFile(b.certFile, certFile);
      await waitFor(() => serve.stderr().includes("TLS certificate reloaded"), 15_000);
      // Each isolate reloads on its own check: wait until a dozen new connections all get the new pair.
      let renewed = false;
      const deadline = Date.now() + 15_000;
      while (!renewed && Date.now() < deadline) renewed = await servesFor(b.caPem, 12);
      assert.equal(renewed, true, serve.stderr());
      assert.equal(await servesFor(a.caPem, 1), false);
      // A bad pair written later is reported, and the served one stays.
      const reports = () => serve.stderr().split("TLS files changed but not reloaded").length;
      const before = reports();
      await Deno.copyFile(a.certFile, certFile);
      await waitFor(() => reports() > before, 15_000);
      assert.match(serve.stderr(), /not reloaded: IPINTEL_TLS_KEY .* is not the private key/);
      await new Promise((resolve) => setTimeout(resolve, 2 * TLS_POLL_MS + 500)); // every isolate has seen it
      assert.equal(await servesFor(b.caPem, 8), true);
    } finally {
      await serve.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
