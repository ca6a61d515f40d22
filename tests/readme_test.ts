import assert from "node:assert/strict";
import { OPTIONS } from "../src/base/config.ts";

// The README is the user's manual: its configuration table must list every setting.

const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("## API"));
const rows = section.split("\n").filter((line) => line.startsWith("| `"));

Deno.test("the README's configuration table has one row per setting, with its flag", () => {
  for (const option of OPTIONS) {
    const row = rows.find((r) => r.startsWith(`| \`${option.env}\``));
    assert.ok(row, `no row for ${option.env}`);
    assert.ok(row.includes(`\`--${option.flag}\``), `${option.env}: flag --${option.flag}`);
  }
  assert.equal(rows.length, OPTIONS.length, "no row for a setting that does not exist");
});
