/**
 * The certificate file is checked block by block before a start or a reload
 * (a bad extra block used to be accepted, then fail every handshake), and a
 * key file others can read is served with a warning. Certificates from
 * openssl (tests/service/compat/_tls.ts).
 */

import assert from "node:assert/strict";
import { readTlsPair, type TlsPair, watchTlsPair } from "../../../src/process/server/tls.ts";
import { makeCertificates, type TestCertificates } from "../../service/compat/_tls.ts";
import { waitFor } from "../../_serve_process.ts";
import { ignoredName } from "../../_skip.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const BAD_BLOCK = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

async function withCertificates(
  run: (dir: string, a: TestCertificates, b: TestCertificates) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-tls-" });
  try {
    await run(dir, await makeCertificates(dir, "a"), await makeCertificates(dir, "b"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** readTlsPair's refusal for this certificate file text and key file, or null when accepted. */
async function refusal(dir: string, certText: string, keyFile: string): Promise<string | null> {
  const certFile = `${dir}/case.crt`;
  await Deno.writeTextFile(certFile, certText);
  try {
    await readTlsPair({ tlsCert: certFile, tlsKey: keyFile }, () => {});
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

Deno.test("every block of the certificate file is checked: a bad one names the file and the block", async () => {
  await withCertificates(async (dir, a, b) => {
    const leaf = await Deno.readTextFile(a.certFile);
    const key = await Deno.readTextFile(a.keyFile);
    // A chain from the server's certificate to its CA, with openssl's text between blocks: served.
    assert.equal(await refusal(dir, leaf, a.keyFile), null);
    assert.equal(await refusal(dir, `subject=CN=localhost\n${leaf}\n${a.caPem}`, a.keyFile), null);
    const cases: [string, RegExp][] = [
      [
        leaf + BAD_BLOCK,
        /IPINTEL_TLS_CERT ".*case\.crt" is not a PEM certificate \(block 2 of 2\)/,
      ],
      [BAD_BLOCK + leaf, /is not a PEM certificate \(block 1 of 2\)/],
      [leaf + key, /\(block 2 of 2\): a PRIVATE KEY block/],
      [leaf + "-----BEGIN CERTIFICATE-----\nMIIB\n", /a "-----BEGIN" line has no "-----END" line/],
      [
        leaf + b.caPem,
        /certificate 1 \(CN=localhost\) is not issued by certificate 2 \(CN=ipintel test CA b\)/,
      ],
      [a.caPem + leaf, /certificate 1 \(CN=ipintel test CA a\) is not issued by certificate 2/],
      ["no PEM here\n", /is not a PEM certificate: it holds no PEM block/],
    ];
    for (const [text, message] of cases) {
      const refused = await refusal(dir, text, a.keyFile);
      assert.match(refused ?? "accepted", message, text.slice(0, 200));
    }
  });
});

Deno.test("a reload keeps the served pair when the new file has a bad extra block, and says so", async () => {
  await withCertificates(async (dir, a) => {
    const config = { tlsCert: `${dir}/live.crt`, tlsKey: a.keyFile };
    const leaf = await Deno.readTextFile(a.certFile);
    await Deno.writeTextFile(config.tlsCert, leaf);
    const installed: TlsPair[] = [];
    const reports: string[] = [];
    const watch = watchTlsPair(
      config,
      (pair) => {
        installed.push(pair);
      },
      (line) => reports.push(line),
      50,
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 100)); // the first stamp is taken
      await Deno.writeTextFile(config.tlsCert, leaf + "\n" + BAD_BLOCK);
      await waitFor(() => reports.length > 0);
      assert.match(
        reports[0]!,
        /TLS files changed but not reloaded: IPINTEL_TLS_CERT .* \(block 2 of 2\)/,
      );
      assert.equal(installed.length, 0);
      await Deno.writeTextFile(config.tlsCert, leaf + "\n" + a.caPem);
      await waitFor(() => installed.length > 0);
      assert.equal(installed[0]!.cert, leaf + "\n" + a.caPem);
    } finally {
      watch.close();
    }
  });
});

Deno.test({
  name: ignoredName(
    "a key file other users can read is served with a warning naming it and its mode",
    Deno.build.os === "windows" ? "Windows files have no Unix modes" : null,
  ),
  ignore: Deno.build.os === "windows",
  fn: () =>
    withCertificates(async (_dir, a) => {
      const warnings: string[] = [];
      const config = { tlsCert: a.certFile, tlsKey: a.keyFile };
      await Deno.chmod(a.keyFile, 0o600);
      assert.notEqual(await readTlsPair(config, (line) => warnings.push(line)), null);
      assert.equal(warnings.length, 0);
      await Deno.chmod(a.keyFile, 0o644);
      assert.notEqual(await readTlsPair(config, (line) => warnings.push(line)), null);
      assert.equal(warnings.length, 1);
      assert.match(
        warnings[0]!,
        /IPINTEL_TLS_KEY ".*a\.key" can be read by other users \(mode 0644\); run chmod 600/,
      );
    }),
});

Deno.test("serve refuses to start on a certificate file with a bad extra block: exit 2, naming it", async () => {
  await withCertificates(async (dir, a) => {
    const certFile = `${dir}/chain.crt`;
    await Deno.writeTextFile(certFile, (await Deno.readTextFile(a.certFile)) + BAD_BLOCK);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts", "serve", "--port", "0"],
      cwd: ROOT,
      env: {
        IPINTEL_TLS_CERT: certFile,
        IPINTEL_TLS_KEY: a.keyFile,
        IPINTEL_KV: ":memory:",
        IPINTEL_UPDATE_INTERVAL: "off",
        NO_COLOR: "1",
      },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const output = await child.output();
    clearTimeout(timer);
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 2, stderr);
    assert.match(
      stderr,
      /IPINTEL_TLS_CERT ".*chain\.crt" is not a PEM certificate \(block 2 of 2\)/,
    );
    assert.doesNotMatch(stderr, /listening/);
  });
});
