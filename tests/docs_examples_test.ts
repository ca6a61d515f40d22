/**
 * The curl examples of the README and docs/ are real answers: each one is sent
 * in process to the app on the real default data (City and ASN, no security
 * feed) and its answer compared with the one the documentation shows.
 *
 * An example is a `curl` command in a ```sh block (an optional `printf '…' |`
 * before it, `\` continuations), answered either by the `# ` lines right after
 * it or, for a block holding one command and no such lines, by the fenced
 * block that follows (JSON compared as values; `curl -i` as status, the headers
 * shown and the body). A block with a line `# needs …` (the security feeds, an
 * API key) is not run here; `deno task start --trusted-proxies …` in a block
 * configures the app for the examples after it. A `current_time` in the answer
 * sets the clock of that example.
 */

import assert from "node:assert/strict";
import { openDataSet } from "../src/data/sources/data_set.ts";
import type { DataSet } from "../src/data/sources/data_set.ts";
import { DEFAULT_DATA_DIR, defaultDataFile, fixtureApp, peer } from "./_helpers.ts";
import { ignoredName } from "./_skip.ts";

const ROOT = new URL("../", import.meta.url);
const FILES = ["README.md", "docs/api.md", "docs/compatible-apis.md"];
/** What curl sends when no -A is given (the answers' user agent parts are from it). */
const CURL_USER_AGENT = "curl/8.5.0";

export interface Example {
  where: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | null;
  includeHeaders: boolean;
  trustedProxies: string[];
  /** The answer as shown: `# ` lines joined, or the following fenced block. */
  expected: string;
  /** The following block's language (`json`, `csv`, …), or "" for `# ` lines. */
  expectedKind: string;
}

/** Splits a shell command into words: single and double quotes, no expansion but `\n` in printf. */
function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    out.push(m[1] ?? m[2]?.replace(/\\(.)/g, "$1") ?? m[3]!);
  }
  return out;
}

/** The request a curl command line sends. */
function parseCurl(command: string, where: string) {
  const [pipe, curl] = command.includes("|") ? command.split(/\|\s*(?=curl)/) : [null, command];
  const args = words(curl!.replace(/\s+#\s.*$/, ""));
  assert.equal(args.shift(), "curl", `${where}: not a curl command`);
  const headers: Record<string, string> = { "user-agent": CURL_USER_AGENT };
  let method = "GET";
  let body: string | null = null;
  let url = "";
  let includeHeaders = false;
  while (args.length) {
    const arg = args.shift()!;
    if (arg === "-A") headers["user-agent"] = args.shift()!;
    else if (arg === "-H") {
      const [name, ...value] = args.shift()!.split(":");
      headers[name!.toLowerCase()] = value.join(":").trim();
    } else if (arg === "-X") method = args.shift()!;
    else if (arg === "-d") body = args.shift()!;
    else if (arg === "--data-binary") {
      assert.equal(args.shift(), "@-", `${where}: --data-binary reads standard input here`);
      const printf = words(pipe ?? "");
      assert.equal(printf[0], "printf", `${where}: standard input comes from printf`);
      body = printf[1]!.replaceAll("\\n", "\n");
    } else if (arg === "-i") includeHeaders = true;
    else if (arg === "-s" || arg === "-sS") continue;
    else if (arg.startsWith("http://localhost:8000/")) url = arg;
    else throw new Error(`${where}: curl option ${arg} is not understood by this test`);
  }
  if (body !== null && method === "GET") method = "POST";
  assert.ok(url, `${where}: no URL`);
  return { method, path: url.slice("http://localhost:8000".length), headers, body, includeHeaders };
}

/** The examples of one markdown file. */
export function examples(file: string, markdown: string): Example[] {
  const lines = markdown.split("\n");
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```sh") continue;
    const start = i + 1;
    let end = start;
    while (!lines[end]!.trimStart().startsWith("```")) end++;
    i = end;
    const block = lines.slice(start, end).map((line) => line.replace(/^ {3}/, ""));
    if (block.some((line) => line.startsWith("# needs "))) continue;
    let trustedProxies: string[] = [];
    const pending: Example[] = [];
    for (let b = 0; b < block.length; b++) {
      const line = block[b]!;
      const where = `${file}:${start + b + 1}`;
      const start_ = /^deno task start (--\S.*?)\s*(#.*)?$/.exec(line);
      if (start_) {
        const flags = words(start_[1]!);
        assert.equal(
          flags[0],
          "--trusted-proxies",
          `${where}: only --trusted-proxies is understood`,
        );
        trustedProxies = flags[1]!.split(",");
        continue;
      }
      if (!/^(curl |printf )/.test(line)) continue;
      let command = line;
      while (command.trimEnd().endsWith("\\") || command.trimEnd().endsWith("|")) {
        command = `${command.trimEnd().replace(/\\$/, "")} ${block[++b]!.trim()}`;
      }
      const output: string[] = [];
      while (block[b + 1]?.startsWith("# ")) output.push(block[++b]!.slice(2));
      pending.push({
        where,
        ...parseCurl(command, where),
        trustedProxies,
        expected: output.join("\n"),
        expectedKind: "",
      });
    }
    // One command with no `# ` answer: its answer is the fenced block that follows.
    if (pending.length === 1 && pending[0]!.expected === "") {
      let next = end + 1;
      while (lines[next]?.trim() === "") next++;
      const fence = /^```(\w*)$/.exec(lines[next]?.trim() ?? "");
      if (!fence) continue;
      let close = next + 1;
      while (lines[close]!.trim() !== "```") close++;
      pending[0]!.expected = lines.slice(next + 1, close).join("\n");
      pending[0]!.expectedKind = fence[1]!;
    }
    found.push(...pending.filter((e) => e.expected !== ""));
  }
  return found;
}

/** The lookup clock of an example: its answer's `current_time`, if it shows one. */
function clockOf(example: Example): Date | undefined {
  const shown = /"current_time":\s*"([^"]+)"/.exec(example.expected);
  return shown ? new Date(shown[1]!) : undefined;
}

async function answer(data: DataSet, example: Example): Promise<Response> {
  const app = await fixtureApp({
    data,
    now: clockOf(example),
    config: { trustedProxies: example.trustedProxies },
  });
  const init: RequestInit = { method: example.method, headers: example.headers };
  if (example.body !== null) init.body = example.body;
  return await app.request(example.path, init, peer("127.0.0.1"));
}

/** Asserts that an answer is the one shown. */
async function compare(response: Response, example: Example): Promise<void> {
  let shown = example.expected;
  if (example.includeHeaders) {
    const [head, ...rest] = shown.split("\n\n");
    const [status, ...headers] = head!.split("\n");
    assert.equal(response.status, Number(status!.split(" ")[1]), `${example.where}: status`);
    for (const header of headers.filter((h) => h !== "…")) {
      const [name, ...value] = header.split(":");
      assert.equal(
        response.headers.get(name!),
        value.join(":").trim(),
        `${example.where}: ${name}`,
      );
    }
    shown = rest.join("\n\n");
  }
  const body = (await response.text()).replaceAll("\r\n", "\n").replace(/\n$/, "");
  if (example.expectedKind === "json") {
    assert.deepEqual(JSON.parse(body), JSON.parse(shown), example.where);
  } else {
    assert.equal(body, shown, example.where);
  }
}

/** The default data's City and ASN databases alone: the answers the docs show without feeds. */
function defaultDatabases(): Promise<DataSet> {
  return openDataSet(`${DEFAULT_DATA_DIR}/no-manifest-here`, {
    databases: [
      { kind: "city", path: defaultDataFile("city"), variable: "IPINTEL_CITY_DB" },
      { kind: "asn", path: defaultDataFile("asn"), variable: "IPINTEL_ASN_DB" },
    ],
  });
}

const realData = await Deno.stat(`${DEFAULT_DATA_DIR}/manifest.json`).then(() => true, () => false);

Deno.test({
  name: ignoredName(
    "the curl examples of the README and docs/ answer what they show",
    realData ? null : "the default data is not built (deno task data)",
  ),
  ignore: !realData,
  fn: async () => {
    const data = await defaultDatabases();
    const all = FILES.flatMap((file) => examples(file, Deno.readTextFileSync(new URL(file, ROOT))));
    assert.ok(all.length >= 20, `only ${all.length} examples found: the reader is broken`);
    for (const example of all) await compare(await answer(data, example), example);
  },
});

Deno.test("an example's answer is the # lines after it, or the block that follows", () => {
  const markdown = [
    "```sh",
    "curl -A 'x y' 'http://localhost:8000/ip/1.1.1.1?get=ip'   # a comment",
    '# {"a":1}',
    "# second line",
    "curl http://localhost:8000/health",
    "```",
    "```sh",
    "deno task start --trusted-proxies 127.0.0.1",
    "printf 'a\\nb\\n' |",
    "  curl -sS --data-binary @- -H 'Content-Type: text/plain' 'http://localhost:8000/bulk'",
    "```",
    "",
    "```json",
    '{ "b": 2 }',
    "```",
    "```sh",
    "# needs the security feeds",
    "curl http://localhost:8000/ip/1.2.3.4",
    "# {}",
    "```",
  ].join("\n");
  const found = examples("x.md", markdown);
  assert.deepEqual(
    found.map((
      e,
    ) => [e.method, e.path, e.headers["user-agent"], e.body, e.expected, e.expectedKind]),
    [
      ["GET", "/ip/1.1.1.1?get=ip", "x y", null, '{"a":1}\nsecond line', ""],
      ["POST", "/bulk", CURL_USER_AGENT, "a\nb\n", '{ "b": 2 }', "json"],
    ],
  );
  assert.deepEqual(found[1]!.trustedProxies, ["127.0.0.1"]);
});
