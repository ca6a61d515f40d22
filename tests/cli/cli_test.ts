import assert from "node:assert/strict";
import type { LookupResult } from "../../src/types.ts";
import { assertLayout, SPEC_LAYOUT } from "../_layout.ts";
import { DEFAULT_DATA_DIR } from "../_helpers.ts";

// The command line as a user runs it: `deno run -A main.ts ...` in a subprocess, on the real
// default data in data/ (built by `deno task data`).

const ROOT = new URL("../..", import.meta.url);
const CHROME_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
  "Chrome/120.0.0.0 Safari/537.36";

/** Runs `main.ts` with `args`; stdout split into lines, stderr as text. */
async function cli(...args: string[]): Promise<{ code: number; lines: string[]; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env: { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const stdout = decoder.decode(output.stdout);
  return {
    code: output.code,
    lines: stdout === "" ? [] : stdout.replace(/\n$/, "").split("\n"),
    stderr: decoder.decode(output.stderr),
  };
}

const parseLine = (line: string | undefined): LookupResult => {
  assert.ok(line !== undefined, "missing output line");
  return JSON.parse(line);
};

Deno.test("ipintel lookup prints one JSON line per address, each with every key", async () => {
  const { code, lines, stderr } = await cli(
    "lookup",
    "8.8.8.8",
    "2001:4860:4860::8888",
    "81.2.69.142",
  );
  assert.equal(code, 0, stderr);
  assert.equal(stderr, "");
  assert.equal(lines.length, 3, lines.join("\n"));
  const results = lines.map(parseLine);
  for (const result of results) assertLayout(result, SPEC_LAYOUT, result.ip);
  assert.deepEqual(
    results.map((r) => [r.ip, r.geoLocation.countryCode, r.connection.asn_number]),
    [["8.8.8.8", "US", 15169], ["2001:4860:4860::8888", "US", 15169], ["81.2.69.142", "GB", 20712]],
  );
  assert.equal(results[0]?.connection.asn_org, "Google LLC");
  assert.equal(results[2]?.geoLocation.is_in_eu, false);
  assert.ok(results.every((r) => r.timezone.current_time !== null));
});

Deno.test("ipintel lookup answers the good addresses, names a bad one on stderr and exits 1", async () => {
  const { code, lines, stderr } = await cli("lookup", "1.2.3", "8.8.8.8");
  assert.equal(code, 1);
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.equal(parseLine(lines[0]).ip, "8.8.8.8");
  assert.match(stderr, /Invalid IP address "1\.2\.3"/);
});

Deno.test("ipintel lookup names a reserved address it has no data for and exits 1", async () => {
  const { code, lines, stderr } = await cli("lookup", "10.0.0.1");
  assert.equal(code, 1);
  assert.deepEqual(lines, []);
  assert.match(stderr, /"10\.0\.0\.1".*private network/);
});

Deno.test("ipintel lookup --lang de names places in German, in either flag form", async () => {
  const en = parseLine((await cli("lookup", "8.8.8.8")).lines[0]).geoLocation;
  assert.equal(en.country, "United States");
  assert.equal(en.continent, "North America");
  for (const flag of [["--lang", "de"], ["--lang=de"]]) {
    const { code, lines } = await cli("lookup", ...flag, "8.8.8.8");
    assert.equal(code, 0);
    const de = parseLine(lines[0]).geoLocation;
    assert.equal(de.country, "USA", flag.join(" "));
    assert.equal(de.continent, "Nordamerika", flag.join(" "));
    assert.equal(de.countryCode, "US"); // codes do not change with the language
  }
});

Deno.test("ipintel lookup --lang rejects a language the City database does not carry", async () => {
  const { code, lines, stderr } = await cli("lookup", "8.8.8.8", "--lang", "xx");
  assert.equal(code, 1);
  assert.deepEqual(lines, []);
  assert.match(stderr, /Unsupported lang "xx": the City database carries .*\bde\b/);
});

Deno.test("ipintel lookup --ua fills userAgent; without it userAgent is empty", async () => {
  const { code, lines } = await cli("lookup", "8.8.8.8", "--ua", CHROME_UA);
  assert.equal(code, 0);
  const { userAgent } = parseLine(lines[0]);
  assert.equal(userAgent.browser.name, "Chrome");
  assert.equal(userAgent.browser.version, "120.0.0.0");
  assert.equal(userAgent.os.name, "Windows");
  assert.equal(userAgent.device.type, "desktop");
  const plain = parseLine((await cli("lookup", "8.8.8.8")).lines[0]).userAgent;
  assert.equal(plain.browser.name, null);
});

Deno.test("ipintel lookup without an address prints its usage and exits 2", async () => {
  const { code, lines, stderr } = await cli("lookup");
  assert.equal(code, 2);
  assert.deepEqual(lines, []);
  assert.match(stderr, /Usage: ipintel lookup <ip>/);
});

Deno.test("ipintel --help exits 0 and describes the lookup command", async () => {
  const { code, lines, stderr } = await cli("--help");
  assert.equal(code, 0, stderr);
  const text = lines.join("\n");
  assert.match(text, /^\s+lookup <ip>/m);
  assert.match(text, /--lang/);
  assert.match(text, /--ua/);
});

Deno.test("ipintel with an unknown command exits 2 and shows the help", async () => {
  const { code, stderr } = await cli("lokup", "8.8.8.8");
  assert.equal(code, 2);
  assert.match(stderr, /Unknown command "lokup"/);
  assert.match(stderr, /lookup <ip>/);
});
