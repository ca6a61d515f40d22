/** `ipintel asn` as a user runs it, on the real default data. */

import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { runCli } from "../../_cli.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

const ENV = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_UPDATE_INTERVAL: "off", NO_COLOR: "1" };
const asn = (...args: string[]) => runCli(["asn", ...args], ENV, 60_000);

Deno.test("ipintel asn prints the data object /asn/{n} answers", async () => {
  const { code, stdout, stderr } = await asn("AS15169", "--get", "name,counts");
  assert.equal(code, 0, stderr);
  const data = JSON.parse(stdout);
  assert.deepEqual(Object.keys(data), ["asn", "name", "counts"]);
  assert.equal(data.asn, 15169);
  assert.match(data.name, /Google/);
  assert.ok(data.counts.ipv4Addresses > 0 && data.counts.ipv6Prefixes > 0);
});

Deno.test("ipintel asn --format csv prints one row per prefix", async () => {
  const { code, stdout } = await asn("15169", "--format", "csv", "--get", "prefixes");
  assert.equal(code, 0);
  const rows: Record<string, string>[] = parseCsv(stdout, { columns: true });
  assert.deepEqual(Object.keys(rows[0]!), ["asn", "version", "prefix"]);
  assert.ok(rows.some((r) => r.prefix === "8.8.8.0/24"), "8.8.8.0/24 is Google's");
});

Deno.test("ipintel asn names a private or malformed number on stderr and exits 1", async () => {
  const privateUse = await asn("64512");
  assert.equal(privateUse.code, 1);
  assert.equal(privateUse.stdout, "");
  assert.match(privateUse.stderr, /No data for AS64512: it is a private-use AS number/);
  const malformed = await asn("abc");
  assert.equal(malformed.code, 1);
  assert.match(malformed.stderr, /Invalid AS number "abc"/);
});

Deno.test("ipintel asn refuses an unknown --get or --format as a usage error", async () => {
  assert.equal((await asn("15169", "--get", "city")).code, 2);
  assert.equal((await asn("15169", "--format", "yaml")).code, 2);
  assert.equal((await asn()).code, 2);
});
