import assert from "node:assert/strict";
import { parseFlags } from "../../../src/process/cli/flags.ts";
import { UsageError } from "../../../src/base/config.ts";

const OWN = {
  force: { type: "boolean", description: "Rebuild" },
  name: { type: "string", short: "n", description: "Name" },
} as const;

Deno.test("parseFlags separates own flags, configuration flags and positionals", () => {
  const parsed = parseFlags(["create", "--name", "ci", "--port=9000", "--force", "x"], OWN);
  assert.deepEqual(parsed.flags, { name: "ci", force: true });
  assert.deepEqual(parsed.config, { port: "9000" });
  assert.deepEqual(parsed.positionals, ["create", "x"]);
  assert.deepEqual(parseFlags(["-n", "ci", "-h"], OWN).flags, { name: "ci", help: true });
  assert.deepEqual(parseFlags(["--", "--force"], OWN).positionals, ["--force"]);
});

Deno.test("parseFlags refuses unknown flags and missing or unexpected values, naming the flag", () => {
  const cases: [string[], RegExp][] = [
    [["--prot", "9000"], /^Unknown option --prot: valid options are .*--port/],
    [["-x"], /^Unknown option -x/],
    [["--port"], /^Option --port needs a value/],
    [["--name", "--force"], /^Option --name needs a value.*--name=<value>/],
    [["--force=yes"], /^Option --force takes no value$/],
  ];
  for (const [args, message] of cases) {
    assert.throws(() => parseFlags(args, OWN), (error: Error) => {
      assert.ok(error instanceof UsageError, `${args}: ${error}`);
      assert.match(error.message, message, args.join(" "));
      return true;
    });
  }
});
