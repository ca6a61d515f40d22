/**
 * The server's static import graph (what `ipintel serve` and the HTTP layer load)
 * holds no part of the data builder: not src/update/, not the MMDB writer. The
 * builder is imported dynamically, only when the server builds or updates data.
 */

import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url);

interface Dependency {
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface Module {
  specifier: string;
  dependencies?: Dependency[];
}

/** Every local module `entry` reaches through static imports, as paths from the repository root. */
async function staticImports(entry: string): Promise<Set<string>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const { modules } = JSON.parse(new TextDecoder().decode(output.stdout)) as { modules: Module[] };
  const bySpecifier = new Map(modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [new URL(entry, ROOT).href];
  while (stack.length) {
    const specifier = stack.pop()!;
    if (seen.has(specifier) || !specifier.startsWith("file:")) continue;
    seen.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dep.code && !dep.isDynamic) stack.push(dep.code.specifier);
    }
  }
  return new Set([...seen].map((s) => s.slice(ROOT.href.length)));
}

Deno.test("the server does not import the data builder or the MMDB writer", async () => {
  assert.ok((await staticImports("src/cli/serve.ts")).has("src/mmdb/reader.ts"));
  for (const entry of ["src/cli/serve.ts", "src/http/app.ts", "src/http/pipeline.ts"]) {
    const reached = await staticImports(entry);
    assert.ok(reached.has("src/http/request_target.ts"), `${entry}: the graph was not read`);
    const builder = [...reached].filter((p) =>
      p.startsWith("src/update/") || p.startsWith("src/mmdb/writer/")
    );
    assert.deepEqual(builder, [], `${entry} imports the builder`);
  }
});
