/**
 * The answer rules run in one wrapper around each handler
 * (src/service/http/rules/rules.ts), in the order src/service/app/app.ts
 * lists them: nothing in src/ registers Hono middleware with `.use(`, which
 * would run outside them (before the instrumentation, around no error answer).
 */

import assert from "node:assert/strict";

const SRC = new URL("../../../src/", import.meta.url);

async function* sources(dir: URL): AsyncGenerator<[string, string]> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* sources(url);
    else if (/\.(ts|js)$/.test(entry.name)) yield [url.pathname, await Deno.readTextFile(url)];
  }
}

Deno.test("nothing in src/ registers middleware with .use(: a rule goes in app.ts's rules", async () => {
  const found: string[] = [];
  let files = 0;
  for await (const [path, text] of sources(SRC)) {
    files++;
    for (const [i, line] of text.split("\n").entries()) {
      if (/\.use\s*\(/.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    }
  }
  assert.ok(files > 100, `${files} files read`);
  assert.deepEqual(found, []);
});

Deno.test("app.ts says how to add a rule, and lists the rules in their order", async () => {
  const app = await Deno.readTextFile(new URL("service/app/app.ts", SRC));
  assert.match(app, /Adding a rule:/);
  assert.match(app, /Never `app\.use`/);
  const order = [
    "instrumentation",
    "pinDataSet",
    "corsHeaders",
    "rateLimitHeaders",
    "headAnswer",
    "hostCheck",
  ];
  const at = order.map((name) => app.indexOf(name, app.indexOf("const rules = [")));
  assert.ok(at.every((i, n) => i > 0 && (n === 0 || i > at[n - 1]!)), `in order: ${at}`);
});
