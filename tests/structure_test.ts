/**
 * The shape of src/, from the imports `deno info` reads (a real parser: static,
 * type-only and dynamic imports alike):
 * - the layers read top-down: a folder (or top-level file) of src/ imports only
 *   from the layers below its own, never from a peer of its layer or above;
 * - no files import each other in a circle;
 * - the server's static import graph (what `ipintel serve` and the HTTP layer
 *   load) holds no part of the data builder: not src/update/, not the MMDB
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
  assert.ok((await staticImports("src/cli/serve.ts")).has("src/mmdb/reader.ts"));
  for (const entry of ["src/cli/serve.ts", "src/http/app.ts", "src/server/server.ts"]) {
    const reached = await staticImports(entry);
    assert.ok(reached.has("src/http/request_target.ts"), `${entry}: the graph was not read`);
    const builder = [...reached].filter((p) =>
      p.startsWith("src/update/") || p.startsWith("src/mmdb/writer/")
    );
    assert.deepEqual(builder, [], `${entry} imports the builder`);
  }
});

/**
 * The layers of src/, top first: each names the folders (and top-level files)
 * it holds. A part imports only parts of lower layers (and its own files).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["cli"], // the commands: parse the command line, run the server or a job
  ["server"], // the running server's wiring: instance, workers, reload, KV, access, shutdown
  ["ops"], // what observes the HTTP app: instrument, metrics per route, access log, readiness
  ["http"], // the Hono app: the route table, its middleware and the routes
  ["compat", "bulk", "policy"], // the compatible shapes; streamed bulk; the forward-auth policy
  ["lookup", "asn"], // one address's answer from the data set; an AS's networks (the ASN view)
  ["update", "enrich"], // the data builder; country, currency, time zone facts
  ["sources"], // the data directory: manifest, sources file, verified data set
  ["history"], // the security lists' kept history: first/last seen, the lists at a past time
  ["risk", "access"], // security flags from the lists; API keys and rate limits
  ["mmdb"], // MaxMind DB reading and writing, the record layouts
  ["config.ts", "ua", "format"], // settings; user-agent parsing; output formats
  ["ip", "cache", "store", "web"], // addresses and CIDRs; LRU; KV stores; the browser page
  ["errors.ts", "types.ts", "shared_part.ts", "sleep.ts"], // errors, result shapes, frozen parts, waits
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

/** The part of src/ a file belongs to: its folder under src/, or itself at the top. */
const partOf = (file: string) => file.split("/")[1]!;

Deno.test("every import runs down the layers of src/", async () => {
  const graph = await sourceGraph();
  assert.ok(graph.get("src/cli/serve.ts")?.has("src/server/instance.ts"), "the graph was not read");
  const layerOf = new Map(LAYERS.flatMap((parts, layer) => parts.map((part) => [part, layer])));
  const unplaced = [...new Set([...graph.keys()].map(partOf))].filter((p) => !layerOf.has(p));
  assert.deepEqual(unplaced, [], "src/ parts in no layer: place them in LAYERS");
  const upward: string[] = [];
  for (const [from, imports] of graph) {
    for (const to of imports) {
      if (partOf(from) === partOf(to)) continue;
      if (layerOf.get(partOf(to))! <= layerOf.get(partOf(from))!) upward.push(`${from} -> ${to}`);
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

Deno.test("the Deno Deploy entry uses src/server/, never the commands of src/cli/", async () => {
  const reached = await staticImports("deploy/deno_deploy.ts");
  assert.ok(reached.has("src/server/server.ts"), "the graph was not read");
  assert.deepEqual([...reached].filter((p) => p.startsWith("src/cli/")), []);
});
