/**
 * `ipintel lookup -` as a user runs it (a subprocess on the real default data):
 * addresses from a pipe, answered in order, bad lines in place, each item the
 * same text as a streamed POST /bulk gives.
 */

import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { openServed } from "../../../src/process/server/served.ts";
import { loadConfig } from "../../../src/base/config.ts";
import { runCli } from "../../_cli.ts";
import { DEFAULT_DATA_DIR, fixtureApp, peer } from "../../_helpers.ts";

/** Runs `main.ts lookup <args>` with `input` piped to its standard input. */
function lookup(input: string, ...args: string[]) {
  const env = { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, NO_COLOR: "1" };
  return runCli(["lookup", ...args], env, 60_000, input);
}

const LINES = [
  "8.8.8.8",
  "",
  "  2a01:4f8::1 ",
  "1.2.3",
  "10.0.0.1",
  "2001:4860:4860::8888",
  "8.8.8.8",
  "=1+1",
];
// The flag, currency and names carry characters outside ASCII: escaped alike everywhere.
const GET = "country,city,asn_number,flag,currency,isThreat";

Deno.test("lookup - answers each line in order, bad lines in place, as POST /bulk?format=ndjson does", async () => {
  const { code, stdout, stderr } = await lookup(
    LINES.join("\n"),
    "-",
    "--get",
    GET,
    "--lang",
    "de",
  );
  assert.equal(code, 0, stderr);
  assert.equal(stderr, "", "no progress line when standard error is not a terminal");
  const services = await openServed(loadConfig({ IPINTEL_DATA_DIR: DEFAULT_DATA_DIR }, {}));
  const app = await fixtureApp({ slot: { current: services } });
  const http = await app.request(`/bulk?format=ndjson&get=${GET}&lang=de`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: LINES.join("\n"),
  }, peer("127.0.0.1"));
  assert.equal(stdout, await http.text());
  const items = stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(items.map((item) => item.ip), [
    "8.8.8.8",
    "2a01:4f8::1",
    "1.2.3",
    "10.0.0.1",
    "2001:4860:4860::8888",
    "8.8.8.8",
    "=1+1",
  ]);
  assert.equal(items[1].country, "Deutschland");
  assert.equal(items[2].error.status, 404);
  assert.match(items[3].error.message, /private network/);
});

Deno.test("lookup with no address reads a pipe; --format csv writes one header and a row a line", async () => {
  const { code, stdout } = await lookup(
    LINES.join("\r\n") + "\r\n",
    "--format",
    "csv",
    "--get",
    "countryCode",
  );
  assert.equal(code, 0);
  const rows = parseCsv(stdout, { columns: true }) as Record<string, string>[];
  assert.deepEqual(Object.keys(rows[0]!), ["ip", "countryCode", "error.status", "error.message"]);
  assert.deepEqual(rows.map((row) => row.countryCode), ["US", "DE", "", "", "US", "US", ""]);
  assert.equal(rows[6]!.ip, "'=1+1", "a formula is neutralised");
});

Deno.test("lookup - with addresses too is a usage error; an unknown lang stops before any output", async () => {
  const both = await lookup("8.8.8.8\n", "-", "8.8.8.8");
  assert.equal(both.code, 2);
  assert.match(both.stderr, /not both/);
  const lang = await lookup("8.8.8.8\n", "-", "--lang", "xx");
  assert.equal(lang.code, 1);
  assert.equal(lang.stdout, "");
  assert.match(lang.stderr, /Unsupported lang "xx"/);
});
