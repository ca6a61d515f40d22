/** Test certificates made with openssl at test time: a CA, and server certificates it signs. */

/** A certificate authority's files, and a server certificate and key it signed for localhost. */
export interface TestCertificates {
  /** The CA certificate (PEM text), for the client's trust store. */
  caPem: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

async function openssl(dir: string, ...args: string[]): Promise<void> {
  const output = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  })
    .output();
  if (!output.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/**
 * Makes a CA named `name` in `dir` and a P-256 server certificate for
 * `localhost` and 127.0.0.1 that it signs (an end-entity certificate, as TLS
 * clients require), valid for a day.
 */
export async function makeCertificates(dir: string, name: string): Promise<TestCertificates> {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await openssl(
    dir,
    "req",
    "-x509",
    ...ec,
    "-keyout",
    `${name}-ca.key`,
    "-out",
    `${name}-ca.crt`,
    "-days",
    "2",
    "-subj",
    `/CN=ipintel test CA ${name}`,
  );
  await openssl(
    dir,
    "req",
    ...ec,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    "/CN=localhost",
  );
  await Deno.writeTextFile(
    `${dir}/${name}.ext`,
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
  );
  await openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${name}-ca.crt`,
    "-CAkey",
    `${name}-ca.key`,
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "1",
    "-extfile",
    `${name}.ext`,
  );
  return {
    caPem: await Deno.readTextFile(`${dir}/${name}-ca.crt`),
    caFile: `${dir}/${name}-ca.crt`,
    certFile: `${dir}/${name}.crt`,
    keyFile: `${dir}/${name}.key`,
  };
}

/** A fetch that trusts `caPem` (Deno's CA option), and a close for its connection pool. */
export function trustingFetch(caPem: string) {
  const client = Deno.createHttpClient({ caCerts: [caPem] });
  return {
    fetch: (input: string | URL | Request, init: RequestInit = {}) =>
      fetch(input, { ...init, client }),
    close: () => client.close(),
  };
}
