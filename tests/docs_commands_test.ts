import assert from "node:assert/strict";
import { ROOT as COMMANDS } from "../src/process/cli/main.ts";
import { RISK_LAYOUT } from "../src/base/types.ts";

// What docs/api.md and docs/compatible-apis.md say of the command line, the risk group and
// the clients, held to the code and to the tests that run the clients.

const read = (path: string) => Deno.readTextFile(new URL(`../${path}`, import.meta.url));
const api = await read("docs/api.md");
const section = (text: string, heading: string) => {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section ${heading}`);
  const end = text.indexOf("\n## ", start + heading.length + 2);
  return text.slice(start, end === -1 ? undefined : end);
};

Deno.test("docs/api.md's command line lists every command and subcommand", () => {
  const commandLine = section(api, "## Command line");
  for (const [name, command] of Object.entries(COMMANDS.subcommands!)) {
    assert.match(commandLine, new RegExp(`deno task ipintel ${name}\\b`), name);
    for (const sub of Object.keys(command.subcommands ?? {})) {
      assert.match(commandLine, new RegExp(`\\b${name} ${sub}\\b`), `${name} ${sub}`);
    }
  }
  // The exit statuses, command by command.
  for (const name of ["serve", "data", "lookup", "asn", "policy", "keys"]) {
    assert.match(commandLine, new RegExp(`^\\| \`${name}[\` ]`, "m"), `exit statuses of ${name}`);
  }
});

Deno.test("docs/api.md's risk table has a row for every field of the risk group", () => {
  const risk = section(api, "## `risk`: why the security flags say what they say");
  const rows = risk.split("\n").filter((line) => line.startsWith("| `"))
    .map((line) => /^\| `(\w+)`/.exec(line)![1]);
  assert.deepEqual(rows, Object.keys(RISK_LAYOUT));
});

Deno.test("docs/compatible-apis.md says how each client trusts a private CA, as the clients test does", async () => {
  const compat = await read("docs/compatible-apis.md");
  const clients = await read("tests/service/compat/clients_test.ts");
  for (const variable of ["REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"]) {
    assert.match(clients, new RegExp(`env: \\{ ${variable}: certs\\.caFile \\}`), variable);
    assert.match(compat, new RegExp(`^${variable}=\\S+\\.pem (python3|node) `, "m"), variable);
  }
});
