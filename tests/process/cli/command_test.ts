import assert from "node:assert/strict";
import { type Command, defineCommand, runCommand } from "../../../src/process/cli/command.ts";
import { UsageError } from "../../../src/base/config.ts";

// A command group shaped like `ipintel keys create|list|revoke`, run in-process.
const calls: unknown[] = [];
const ROOT: Command = {
  summary: "test root",
  subcommands: {
    keys: {
      summary: "Manage keys",
      subcommands: {
        create: defineCommand({
          summary: "Create a key",
          flags: {
            name: { type: "string", placeholder: "<name>", description: "Key name" },
            limit: { type: "string", placeholder: "<n>", description: "Requests per window" },
            json: { type: "boolean", description: "Print JSON" },
          },
          run: ({ flags, config }) => {
            if (!flags.name) throw new UsageError("Option --name is required");
            calls.push({ create: flags, port: config.port });
            return Promise.resolve(0);
          },
        }),
        revoke: defineCommand({
          summary: "Revoke a key",
          usage: "<id>",
          positionals: { min: 1, max: 1 },
          run: ({ positionals }) => (calls.push({ revoke: positionals[0] }), Promise.resolve(0)),
        }),
      },
    },
  },
};

/** Runs the CLI with console output captured. */
async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => out.push(a.join(" "));
  console.error = (...a: unknown[]) => err.push(a.join(" "));
  try {
    const code = await runCommand(ROOT, args, {}, "t");
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    Object.assign(console, { log, error });
  }
}

Deno.test("subcommands get their own flags, configuration flags and positionals", async () => {
  calls.length = 0;
  assert.equal((await run("keys", "create", "--name", "ci", "--json", "--port", "9000")).code, 0);
  assert.equal((await run("keys", "revoke", "k_123")).code, 0);
  assert.deepEqual(calls, [{ create: { name: "ci", json: true }, port: 9000 }, {
    revoke: "k_123",
  }]);
});

Deno.test("subcommand usage errors exit 2 naming the problem", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["keys", "create", "--nmae", "ci"],
      /^t keys create: Unknown option --nmae: valid options are --name, --limit, --json/,
    ],
    [["keys", "create"], /^t keys create: Option --name is required$/],
    [
      ["keys", "revoke"],
      /^t keys revoke: Missing argument\nUsage: t keys revoke <id> \[options\]$/,
    ],
    [["keys", "revoke", "a", "b"], /^t keys revoke: Unexpected argument "b"/],
    [["keys", "rotate"], /^t keys: Unknown command "rotate"/],
    [["keys"], /^t keys: Missing command/],
    [["keys", "create", "--port", "x", "--name", "n"], /^t keys create: Invalid --port "x"/],
  ];
  for (const [args, message] of cases) {
    const { code, err } = await run(...args);
    assert.equal(code, 2, args.join(" "));
    assert.match(err, message, args.join(" "));
  }
});

Deno.test("group and subcommand help list what they declare", async () => {
  const group = await run("keys", "--help");
  assert.equal(group.code, 0);
  assert.match(group.out, /^Usage: t keys <command> \[options\]$/m);
  assert.match(group.out, /^\s+create\s+Create a key$/m);
  assert.match(group.out, /^\s+revoke <id>\s+Revoke a key$/m);
  const create = await run("keys", "create", "--help");
  assert.match(create.out, /--name <name>\s+Key name/);
  assert.match(create.out, /--json\s+Print JSON/);
});

Deno.test("a subcommand's help lists its own options and the settings it reads, then points to serve --help", async () => {
  const { ROOT: REAL } = await import("../../../src/process/cli/main.ts");
  const help = async (...args: string[]) => {
    const out: string[] = [];
    const { log } = console;
    console.log = (...a: unknown[]) => out.push(a.join(" "));
    try {
      assert.equal(await runCommand(REAL, [...args, "--help"], {}), 0);
    } finally {
      console.log = log;
    }
    return out.join("\n");
  };
  const list = await help("keys", "list");
  assert.match(list, /--json\s/);
  assert.match(list, /--kv\s+IPINTEL_KV\s/);
  assert.doesNotMatch(list, /--port\s|IPINTEL_FORWARDED_HEADER|IPINTEL_TLS_CERT/);
  assert.match(list, /"ipintel serve --help" lists every one/);
  assert.ok(list.split("\n").length < 25, `keys list --help: ${list.split("\n").length} lines`);
  const data = await help("data");
  assert.match(data, /--force\s/);
  assert.match(data, /--sources\s+IPINTEL_SOURCES\s/);
  assert.doesNotMatch(data, /--port\s/);
  // serve reads them all: its help lists every one.
  const serve = await help("serve");
  assert.match(serve, /--port\s+PORT\s/);
  assert.match(serve, /--forwarded-header\s+IPINTEL_FORWARDED_HEADER\s/);
});
