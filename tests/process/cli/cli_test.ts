import assert from "node:assert/strict";
import type { LookupResult } from "../../../src/base/types.ts";
import { assertLayout, SPEC_LAYOUT } from "../../_layout.ts";
import { parse as parseCsv } from "csv-parse/sync";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

// The command line as a user runs it: `deno run -A main.ts ...` in a subprocess, on the real
// default data in data/ (built by `deno task data`).

const ROOT = new URL("../../..", import.meta.url);
const CHROME_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
  "Chrome/120.0.0.0 Safari/537.36";

/** Runs `main.ts` with `args`; stdout split into lines, stderr as text. */
function cli(...args: string[]): Promise<{ code: number; lines: string[]; stderr: string }> {
  return cliWith({}, ...args);
}

/**
 * Runs `main.ts` with extra environment variables. A command that wrongly
 * starts a server instead of exiting is killed after a while (and fails).
 */
async function cliWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; lines: string[]; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env: {
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_UPDATE_INTERVAL: "off",
      NO_COLOR: "1",
      PORT: "0",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
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
  assert.match(stderr, /Missing argument\nUsage: ipintel lookup <ip>/);
});

Deno.test("ipintel --help lists the commands; lookup --help describes its flags", async () => {
  const { code, lines, stderr } = await cli("--help");
  assert.equal(code, 0, stderr);
  const text = lines.join("\n");
  for (const command of ["serve", "data", "lookup <ip>"]) {
    assert.match(text, new RegExp(`^\\s+${command}\\s`, "m"));
  }
  const lookup = (await cli("lookup", "--help")).lines.join("\n");
  for (const flag of ["--ua <string>", "--lang <code>", "--get <fields>", "--format <format>"]) {
    assert.ok(lookup.includes(flag), flag);
  }
});

Deno.test("ipintel --help prints the README's configuration table: every setting with its default, aligned", async () => {
  const { OPTIONS, defaultText } = await import("../../../src/base/config.ts");
  const { code, lines, stderr } = await cli("--help");
  assert.equal(code, 0, stderr);
  const header = lines.findIndex((line) => /^\s+flag\s+variable\s+default\s+meaning$/.test(line));
  assert.ok(header > 0, `no header row:\n${lines.join("\n")}`);
  const table = lines.slice(header, header + 1 + OPTIONS.length);
  const starts = (line: string) => [...line.matchAll(/(?<=^|\s{2})\S/g)].map((m) => m.index);
  const columns = starts(table[0]!);
  assert.equal(columns.length, 4);
  OPTIONS.forEach((option, i) => {
    const row = table[i + 1]!;
    const cells = [`--${option.flag}`, option.env, defaultText(option), option.description];
    cells.forEach((cell, c) => {
      assert.equal(
        row.slice(columns[c]!, columns[c]! + cell.length),
        cell,
        `${option.env}: ${row}`,
      );
    });
    assert.equal(row.slice(columns[3]!), option.description, `${option.env}: ${row}`);
  });
});

Deno.test("ipintel with an unknown command exits 2 and shows the help", async () => {
  const { code, stderr } = await cli("lokup", "8.8.8.8");
  assert.equal(code, 2);
  assert.match(stderr, /Unknown command "lokup"/);
  assert.match(stderr, /lookup <ip>/);
});

Deno.test("ipintel with no command prints the help and exits 2 instead of serving", async () => {
  const { code, lines, stderr } = await cli();
  assert.equal(code, 2, stderr);
  assert.deepEqual(lines, []);
  assert.match(stderr, /^ipintel: Missing command\n/);
  assert.match(stderr, /^\s+serve\s/m);
  assert.doesNotMatch(stderr, /listening/);
});

Deno.test("ipintel serve --help prints the serve options and exits 0 instead of serving", async () => {
  for (const flag of ["--help", "-h"]) {
    const { code, lines, stderr } = await cli("serve", flag);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, "");
    const text = lines.join("\n");
    assert.match(text, /^Usage: ipintel serve \[options\]$/m);
    assert.match(text, /--port\s+PORT\s/);
    assert.match(text, /--forwarded-header\s+IPINTEL_FORWARDED_HEADER\s/);
  }
});

Deno.test("ipintel --version prints the version from deno.json", async () => {
  const { version } = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  for (const args of [["--version"], ["-V"], ["lookup", "--version"]]) {
    const { code, lines } = await cli(...args);
    assert.equal(code, 0);
    assert.deepEqual(lines, [`ipintel ${version}`], args.join(" "));
  }
});

Deno.test("a mistyped flag or a flag without its value exits 2 naming it, serving nothing", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["serve", "--prot", "9000"],
      /^ipintel serve: Unknown option --prot: valid options are .*--port/,
    ],
    [["serve", "--port"], /^ipintel serve: Option --port needs a value/],
    [["data", "--force=yes"], /^ipintel data: Option --force takes no value/],
    [["lookup", "8.8.8.8", "--ua"], /^ipintel lookup: Option --ua needs a value/],
    [
      ["lookup", "8.8.8.8", "--format", "yaml"],
      /^ipintel lookup: Invalid --format "yaml": expected json, ndjson, xml or csv/,
    ],
    [
      ["lookup", "8.8.8.8", "--get", "contry"],
      /^ipintel lookup: Invalid --get: Unknown field "contry"/,
    ],
  ];
  for (const [args, message] of cases) {
    const { code, lines, stderr } = await cli(...args);
    assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
    assert.deepEqual(lines, [], args.join(" "));
    assert.match(stderr, message, args.join(" "));
    assert.doesNotMatch(stderr, /listening/, args.join(" "));
  }
});

Deno.test("an invalid setting stops serve at once with exit 2 and one line naming it", async () => {
  const cases: [Record<string, string>, string[], RegExp][] = [
    [
      { PORT: "notaport" },
      [],
      /^ipintel serve: Invalid PORT "notaport": expected an integer from 0 to 65535\n$/,
    ],
    [{}, ["--bulk-max=-5"], /^ipintel serve: Invalid --bulk-max "-5": expected an integer/],
    [
      { IPINTEL_TRUSTED_PROXIES: "10.0.0.0/33" },
      [],
      /^ipintel serve: Invalid IPINTEL_TRUSTED_PROXIES "10\.0\.0\.0\/33"/,
    ],
    [
      { IPINTEL_DATA_DIR: "/nonexistent/ipintel" },
      [],
      /^ipintel serve: Invalid IPINTEL_DATA_DIR "\/nonexistent\/ipintel": expected an existing directory/,
    ],
  ];
  for (const [env, args, message] of cases) {
    const { code, stderr } = await cliWith(env, "serve", ...args);
    assert.equal(code, 2, stderr);
    assert.match(stderr, message);
    assert.doesNotMatch(stderr, /listening/);
  }
});

Deno.test("ipintel lookup --get keeps the chosen fields, like the API's get", async () => {
  const { code, lines } = await cli("lookup", "8.8.8.8", "--get", "countryCode,asn_number");
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(lines[0]!), { ip: "8.8.8.8", countryCode: "US", asn_number: 15169 });
});

Deno.test("ipintel lookup --format csv prints one CSV document, one row per address", async () => {
  const { code, lines, stderr } = await cli(
    "lookup",
    "8.8.8.8",
    "81.2.69.142",
    "--get=countryCode,asn_org",
    "--format",
    "csv",
  );
  assert.equal(code, 0, stderr);
  const rows = parseCsv(lines.join("\n"), { columns: true });
  assert.deepEqual(rows, [
    { ip: "8.8.8.8", countryCode: "US", asn_org: "Google LLC" },
    { ip: "81.2.69.142", countryCode: "GB", asn_org: "Andrews & Arnold Ltd" },
  ]);
});

Deno.test("ipintel lookup --format xml prints the API's XML document, checked by xmllint", async () => {
  const { code, lines } = await cli("lookup", "8.8.8.8", "--get", "countryCode", "--format", "XML");
  assert.equal(code, 0);
  const xpath = await new Deno.Command("xmllint", {
    args: ["--xpath", "string(/response/data/countryCode)", "-"],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = xpath.stdin.getWriter();
  await writer.write(new TextEncoder().encode(lines.join("\n")));
  await writer.close();
  const result = await xpath.output();
  assert.equal(result.code, 0);
  assert.equal(new TextDecoder().decode(result.stdout).trim(), "US");
});
