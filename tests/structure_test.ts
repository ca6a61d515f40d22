/**
 * The shape of src/, from the imports `deno info` reads (a real parser: static,
 * type-only and dynamic imports alike):
 * - the layers read top-down: a folder (or top-level file) of src/ imports only
 *   from the layers below its own, never from a peer of its layer or above;
 * - no files import each other in a circle;
 * - the server's static import graph (what `ipintel serve` and the HTTP layer
 *   load) holds no part of the data builder: not src/data/update/, not the MMDB
 *   writer. The builder is imported dynamically, only when the server builds
 *   or updates data.
 */

import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url);

interface Dependency {
  code?: { specifier: string };
  type?: { specifier: string };
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
  assert.ok((await staticImports("src/process/cli/serve.ts")).has("src/data/mmdb/reader.ts"));
  for (
    const entry of [
      "src/process/cli/serve.ts",
      "src/service/app/app.ts",
      "src/process/server/server.ts",
    ]
  ) {
    const reached = await staticImports(entry);
    assert.ok(
      reached.has("src/service/http/request_target.ts"),
      `${entry}: the graph was not read`,
    );
    const builder = [...reached].filter((p) =>
      p.startsWith("src/data/update/") || p.startsWith("src/data/mmdb/writer/")
    );
    assert.deepEqual(builder, [], `${entry} imports the builder`);
  }
});

/**
 * The layers of src/, top first: each is a folder of src/ with a README.md
 * saying what it holds and what it may import, and holds parts (folders, or
 * files at its top) in sub-layers, top first. A part imports only its own
 * files, the parts of a lower sub-layer of its layer, and any lower layer.
 */
const LAYERS: readonly { folder: string; parts: readonly (readonly string[])[] }[] = [
  { folder: "process", parts: [["cli"], ["server"]] },
  {
    folder: "service",
    parts: [["app", "ops"], ["mcp"], ["compat", "bulk", "policy"], ["http"], [
      "keys_limits",
      "web",
    ]],
  },
  { folder: "core", parts: [["enrich"], ["lookup", "asn"], ["place", "ua", "format"]] },
  {
    folder: "data",
    parts: [["update"], ["sources"], ["history"], ["risk"], ["mmdb", "store"]],
  },
  {
    folder: "base",
    parts: [["config.ts"], ["ip", "cache"], [
      "errors.ts",
      "types.ts",
      "shared_part.ts",
      "sleep.ts",
      "suggest.ts",
      "bytes.ts",
    ]],
  },
];

const SRC = new URL("../src/", import.meta.url);

/** Every .ts file under src/, as paths from the repository root. */
async function sourceFiles(dir = SRC, prefix = "src/"): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) {
      files.push(...await sourceFiles(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`));
    } else if (entry.name.endsWith(".ts")) files.push(`${prefix}${entry.name}`);
  }
  return files.sort();
}

/** Every import of every file under src/ (static, type-only, dynamic) that names a file under src/. */
async function sourceGraph(): Promise<Map<string, Set<string>>> {
  const files = await sourceFiles();
  const dir = await Deno.makeTempDir();
  try {
    const entry = `${dir}/all.ts`;
    await Deno.writeTextFile(
      entry,
      files.map((file) => `import "${new URL(file, ROOT).href}";\n`).join(""),
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", new URL("deno.json", ROOT).pathname, entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    const { modules } = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      modules: Module[];
    };
    const local = (specifier: string | undefined) =>
      specifier?.startsWith(new URL("src/", ROOT).href) ? specifier.slice(ROOT.href.length) : null;
    const graph = new Map(files.map((file) => [file, new Set<string>()]));
    for (const module of modules) {
      const from = local(module.specifier);
      if (from === null) continue;
      for (const dep of module.dependencies ?? []) {
        for (const to of [local(dep.code?.specifier), local(dep.type?.specifier)]) {
          if (to !== null && to.endsWith(".ts")) graph.get(from)!.add(to);
        }
      }
    }
    return graph;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A file's place: its layer's index, and its part's sub-layer within that layer. */
function placeOf(file: string): { layer: number; sublayer: number; part: string } | null {
  const [, folder, part] = file.split("/");
  const layer = LAYERS.findIndex((l) => l.folder === folder);
  if (layer === -1 || part === undefined) return null;
  const sublayer = LAYERS[layer]!.parts.findIndex((parts) => parts.includes(part));
  return sublayer === -1 ? null : { layer, sublayer, part: `${folder}/${part}` };
}

Deno.test("src/ holds exactly the layers, each with its parts and a README saying what it may import", async () => {
  const entries = async (url: URL) => {
    const names: string[] = [];
    for await (const entry of Deno.readDir(url)) names.push(entry.name);
    return names.sort();
  };
  assert.deepEqual(await entries(SRC), LAYERS.map((l) => l.folder).sort());
  for (const [index, { folder, parts }] of LAYERS.entries()) {
    const dir = new URL(`${folder}/`, SRC);
    assert.deepEqual(await entries(dir), [...parts.flat(), "README.md"].sort(), `src/${folder}/`);
    const readme = await Deno.readTextFile(new URL("README.md", dir));
    const below = LAYERS.slice(index + 1).map((l) => `\`${l.folder}\``).join(", ");
    const allowed = below === "" ? "May import: nothing outside `base`." : `May import: ${below}.`;
    assert.ok(readme.includes(allowed), `src/${folder}/README.md should say "${allowed}"`);
    for (const part of parts.flat()) {
      const row = new RegExp(`^\\| \`${part}${part.endsWith(".ts") ? "" : "/"}\` +\\|`, "m");
      assert.match(readme, row, `src/${folder}/README.md: no row for ${part}`);
    }
  }
});

Deno.test("every import runs down the layers of src/", async () => {
  const graph = await sourceGraph();
  assert.ok(
    graph.get("src/process/cli/serve.ts")?.has("src/process/server/instance.ts"),
    "the graph was not read",
  );
  const unplaced = [...graph.keys()].filter((file) => placeOf(file) === null);
  assert.deepEqual(unplaced, [], "src/ files in no layer: place their part in LAYERS");
  const upward: string[] = [];
  for (const [from, imports] of graph) {
    const a = placeOf(from)!;
    for (const to of imports) {
      const b = placeOf(to)!;
      if (a.part === b.part || b.layer > a.layer) continue;
      if (b.layer === a.layer && b.sublayer > a.sublayer) continue;
      upward.push(`${from} -> ${to}`);
    }
  }
  assert.deepEqual(upward, [], "imports that run up the layers (or across one)");
});

Deno.test("no files of src/ import each other in a circle", async () => {
  const graph = await sourceGraph();
  const circles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") {
        circles.push([...path.slice(path.indexOf(next)), next].join(" -> "));
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  assert.deepEqual(circles, []);
});

Deno.test("the Deno Deploy entry uses src/process/server/, never the commands of src/process/cli/", async () => {
  const reached = await staticImports("deploy/deno_deploy.ts");
  assert.ok(reached.has("src/process/server/server.ts"), "the graph was not read");
  assert.deepEqual([...reached].filter((p) => p.startsWith("src/process/cli/")), []);
});
