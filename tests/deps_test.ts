/**
 * The two lock files (README, "Dependencies"): `deno task` installs every package of `deno.lock`
 * before it runs a task, so `deno.lock` holds exactly what src/ imports and a first
 * `deno task start` fetches nothing a test or benchmark uses. Test and benchmark packages live in
 * deno.json's `scopes` (tests/, bench/) and are pinned in `deno.dev.lock`, which the check, test
 * and bench tasks name with `--lock`.
 */

import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url);

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, { integrity: string; dependencies?: string[] }>;
}
interface Info {
  modules: { kind?: string; npmPackage?: string }[];
  npmPackages: Record<string, { dependencies?: string[] }>;
}

async function readLock(name: string): Promise<Lock> {
  return JSON.parse(await Deno.readTextFile(new URL(name, ROOT))) as Lock;
}

async function srcFiles(dir = new URL("src/", ROOT)): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.isDirectory ? `${entry.name}/` : entry.name, dir);
    if (entry.isDirectory) files.push(...await srcFiles(url));
    else if (entry.name.endsWith(".ts")) files.push(url.href);
  }
  return files;
}

/** The npm packages (lock ids) that main.ts and every file of src/ reach, dependencies included. */
async function servingPackages(): Promise<Set<string>> {
  const dir = await Deno.makeTempDir();
  try {
    // Every src/ file, not only main.ts: workers and dynamic imports count too.
    const entry = `${dir}/all.ts`;
    const files = [new URL("main.ts", ROOT).href, ...await srcFiles()];
    await Deno.writeTextFile(entry, files.map((f) => `import "${f}";\n`).join(""));
    // A copy of the full lock, frozen: versions come from the locks, nothing is written.
    await Deno.copyFile(new URL("deno.dev.lock", ROOT), `${dir}/dev.lock`);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--frozen", `--lock=${dir}/dev.lock`, entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    const info = JSON.parse(new TextDecoder().decode(output.stdout)) as Info;
    // `npmPackages` lists the whole lock; what the graph uses is read from its modules.
    const stack = info.modules.flatMap((m) =>
      m.kind === "npm" && m.npmPackage ? [m.npmPackage] : []
    );
    const reached = new Set<string>();
    while (stack.length) {
      const id = stack.pop()!;
      if (reached.has(id)) continue;
      reached.add(id);
      stack.push(...info.npmPackages[id]?.dependencies ?? []);
    }
    return reached;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("deno.lock holds exactly the npm packages src/ imports, no test or bench package", async () => {
  const lock = await readLock("deno.lock");
  const serving = await servingPackages();
  assert.ok(serving.has("hono@4.13.19"), "the serving graph reaches hono");
  assert.deepEqual(
    Object.keys(lock.npm).sort(),
    [...serving].sort(),
    "deno.lock differs from what src/ imports: a test run without --lock=deno.dev.lock adds " +
      "test packages to it; restore it from git, and add a package src/ needs to both locks",
  );
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))) as {
    scopes: Record<string, Record<string, string>>;
  };
  for (const scope of Object.values(config.scopes)) {
    for (const target of Object.values(scope)) {
      const specifier = target.replace(/^(npm:@?[^@/]+(?:\/[^@/]+)?@[^/]+).*$/, "$1");
      assert.ok(!(specifier in lock.specifiers), `${specifier} (tests/bench only) is in deno.lock`);
    }
  }
});

Deno.test("deno.dev.lock pins every package of deno.lock the same way", async () => {
  const [lean, full] = [await readLock("deno.lock"), await readLock("deno.dev.lock")];
  for (const [id, entry] of Object.entries(lean.npm)) {
    assert.equal(full.npm[id]?.integrity, entry.integrity, `${id} differs between the locks`);
  }
  for (const [specifier, id] of Object.entries(lean.specifiers)) {
    assert.equal(full.specifiers[specifier], id, `${specifier} differs between the locks`);
  }
  assert.ok("npm:puppeteer-core@25.16.0" in full.specifiers, "deno.dev.lock pins test packages");
});
