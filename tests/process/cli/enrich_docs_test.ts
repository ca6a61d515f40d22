/**
 * docs/enrich.md stays true: every fenced `sh` block is run with the real CLI
 * (`deno task ipintel` becomes `deno run -A main.ts`) in a directory of inputs
 * made from the page itself (the rows its outputs show), and an output block
 * right after a command must be what the command prints. A pipeline is also
 * run stage by stage; `journalctl` is a stand-in printing generated sshd lines.
 */

import assert from "node:assert/strict";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const PAGE = await Deno.readTextFile(`${ROOT}docs/enrich.md`);

interface Block {
  lang: string;
  text: string;
  /** Whether only blank lines separate it from the block before. */
  follows: boolean;
}

function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let end = -1;
  for (let m = fence.exec(markdown); m !== null; m = fence.exec(markdown)) {
    const between = end === -1 ? "x" : markdown.slice(end, m.index);
    found.push({ lang: m[1]!, text: m[2]!, follows: between.trim() === "" });
    end = m.index + m[0].length;
  }
  return found;
}

/** The command's output block, when one follows it. */
function outputOf(all: Block[], i: number): Block | null {
  const next = all[i + 1];
  return next && next.follows && next.lang !== "sh" ? next : null;
}

const SSHD = [
  "2026-11-20T08:15:02+0000 gate sshd[812]: Accepted publickey for alice from 185.220.101.1 port 51234 ssh2",
  "2026-11-20T08:16:40+0000 gate sshd[815]: Failed password for root from 45.9.20.11 port 40022 ssh2",
  "2026-11-20T09:02:13+0000 gate sshd[901]: Accepted password for bob from 8.8.8.8 port 50110 ssh2",
];

/** The inputs the page's commands read, from the rows its outputs show. */
async function writeInputs(dir: string, all: Block[]): Promise<void> {
  const after = (command: RegExp) => {
    const i = all.findIndex((b) => b.lang === "sh" && command.test(b.text));
    assert.ok(i !== -1, `docs/enrich.md has no command matching ${command}`);
    return outputOf(all, i)!.text;
  };
  // logins.csv: the first three columns of the rows shown.
  const { parse } = await import("csv-parse/sync");
  const { stringify } = await import("csv-stringify/sync");
  const rows: string[][] = parse(after(/enrich logins\.csv/));
  await Deno.writeTextFile(`${dir}/logins.csv`, stringify(rows.map((r) => r.slice(0, 3))));
  // events.ndjson: the lines shown, without the key enrich added.
  const events = after(/enrich events\.ndjson/).trimEnd().split("\n").map((line) =>
    line.replace(/,"ipintel":\{.*\}\}$/, "}")
  );
  await Deno.writeTextFile(`${dir}/events.ndjson`, events.join("\n") + "\n");
  // access.log: the lines shown.
  const lines = after(/enrich access\.log --get countryCode,asn_number/).trimEnd().split("\n")
    .map((line) => JSON.parse(line).line);
  await Deno.writeTextFile(`${dir}/access.log`, lines.join("\n") + "\n");
  // orders.csv: the first three columns of the rows shown (a Shopify export's times).
  const orders: string[][] = parse(after(/enrich orders\.csv/));
  await Deno.writeTextFile(`${dir}/orders.csv`, stringify(orders.map((r) => r.slice(0, 3))));
  // app.log: pino's lines as the jq output shows them (time, user, req.ip).
  const app = after(/enrich app\.log/).trimEnd().split("\n").map((line) => {
    const { time, user, ip } = JSON.parse(line);
    return JSON.stringify({ level: 30, time, user, req: { ip }, msg: "login" });
  });
  await Deno.writeTextFile(`${dir}/app.log`, app.join("\n") + "\n");
  // A journalctl that prints generated sshd lines in its short-iso form.
  await Deno.mkdir(`${dir}/bin`);
  await Deno.writeTextFile(`${dir}/bin/journalctl`, `#!/bin/sh\ncat "${dir}/sshd.txt"\n`);
  await Deno.chmod(`${dir}/bin/journalctl`, 0o755);
  await Deno.writeTextFile(`${dir}/sshd.txt`, SSHD.join("\n") + "\n");
}

/** Runs a shell command in `dir` with the real CLI; its exit code and output. */
async function sh(dir: string, command: string, stdin?: string) {
  const script = command.replaceAll(
    /deno task (-q )?ipintel/g,
    `"${Deno.execPath()}" run -A "${ROOT}main.ts"`,
  );
  const child = new Deno.Command("bash", {
    args: ["-o", "pipefail", "-c", script],
    cwd: dir,
    env: {
      PATH: `${dir}/bin:${Deno.env.get("PATH")}`,
      HOME: Deno.env.get("HOME") ?? dir,
      IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
      IPINTEL_UPDATE_INTERVAL: "off",
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** The stages of a pipeline (comment lines dropped), split at a `|` ending a line. */
function stages(text: string): string[] {
  const lines = text.split("\n").filter((line) => !line.trimStart().startsWith("#"));
  return lines.join("\n").split(/\|\s*\n/).map((stage) => stage.trim()).filter(Boolean);
}

Deno.test("docs/enrich.md: every command runs, and prints the output the page shows", async () => {
  const all = blocks(PAGE);
  const commands = all.map((b, i) => [b, i] as const).filter(([b]) => b.lang === "sh");
  assert.ok(commands.length >= 5, "the page's commands are found");
  const dir = await Deno.makeTempDir();
  try {
    await writeInputs(dir, all);
    for (const [block, i] of commands) {
      const command = block.text.trim();
      if (/\[file \| -\] \[options\]/.test(command)) {
        // The synopsis: its words are the command's own.
        const help = await sh(dir, "deno task ipintel enrich --help");
        assert.equal(help.code, 0, help.stderr);
        assert.match(help.stdout, /Usage: .*enrich \[<file> \| -\]/);
        continue;
      }
      const run = await sh(dir, command);
      assert.equal(run.code, 0, `${command}\n${run.stderr}`);
      const shown = outputOf(all, i);
      if (shown) assert.equal(run.stdout, shown.text, command);
      // Each stage of a pipeline, and each prefix of it, runs too.
      const parts = stages(block.text);
      for (let n = 1; n < parts.length; n++) {
        const prefix = await sh(dir, parts.slice(0, n).join(" |\n"));
        assert.equal(prefix.code, 0, `${parts.slice(0, n).join(" | ")}\n${prefix.stderr}`);
        assert.notEqual(prefix.stdout, "", `${parts.slice(0, n).join(" | ")} printed nothing`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/enrich.md's forensics recipe: awk takes the user and the address of a short-iso sshd line, jq keeps the Tor logins", async () => {
  const all = blocks(PAGE);
  const recipe = all.find((b) =>
    b.lang === "sh" && b.text.includes("journalctl") && b.text.includes("isTor")
  )!;
  const [source, awk, enrich, jq] = stages(recipe.text);
  assert.ok(source && awk && enrich && jq, "journalctl | awk | enrich | jq");
  const dir = await Deno.makeTempDir();
  try {
    await writeInputs(dir, all);
    const logins = await sh(dir, `${source} |\n${awk}`);
    assert.equal(logins.code, 0, logins.stderr);
    assert.deepEqual(logins.stdout.trimEnd().split("\n").map((line) => JSON.parse(line)), [
      { time: "2026-11-20T08:15:02+0000", user: "alice", ip: "185.220.101.1" },
      { time: "2026-11-20T09:02:13+0000", user: "bob", ip: "8.8.8.8" },
    ]);
    // enrich reads the awk's lines (their time too: no "invalid time").
    const enriched = await sh(dir, `${enrich}`, logins.stdout);
    assert.equal(enriched.code, 0, enriched.stderr);
    const records = enriched.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(records.map((r) => [r.user, r.ip]), [["alice", "185.220.101.1"], [
      "bob",
      "8.8.8.8",
    ]]);
    assert.doesNotMatch(enriched.stderr, /invalid time/);
    // jq keeps a login from a Tor exit of the time, shaped as the page says.
    const matches = [{ kind: "tor", source: "tor-exits" }];
    const judged = [
      { ...records[0], ipintel: { isTor: true, risk: { matches } } },
      { ...records[1], ipintel: { isTor: false, risk: { matches: [] } } },
    ].map((r) => JSON.stringify(r)).join("\n") + "\n";
    const kept = await sh(dir, jq, judged);
    assert.equal(kept.code, 0, kept.stderr);
    assert.deepEqual(JSON.parse(kept.stdout), {
      time: "2026-11-20T08:15:02+0000",
      user: "alice",
      ip: "185.220.101.1",
      lists: matches,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
