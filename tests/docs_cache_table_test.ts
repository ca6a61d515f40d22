/**
 * docs/design.md's table of every cache and memo ("Every cache and memo"):
 * each row names a cache, its key, its bound, an owner module that exists,
 * and what drops it; and every module of src/ that makes an LruCache, a
 * SlotTable or a WeakMap owns a row (a new cache without a row fails here).
 */

import assert from "node:assert/strict";

const DESIGN = new URL("../docs/design.md", import.meta.url);
const ROOT = new URL("../", import.meta.url);

interface Row {
  cache: string;
  key: string;
  bound: string;
  owners: string[];
  dropped: string;
}

/** The paths of src/'s files, from the repository's root. */
async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(new URL(`${dir}/`, ROOT))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile) yield path;
  }
}

/** The table's rows, under its header (`| cache | key | bound (in memory) | owner | dropped by |`). */
function cacheTable(text: string): Row[] {
  const start = text.indexOf("### Every cache and memo");
  assert.ok(start >= 0, "docs/design.md has the section");
  const lines = text.slice(start).split("\n");
  const header = lines.findIndex((l) => /^\|\s*cache\s*\|/.test(l));
  assert.ok(header >= 0, "the table has its header");
  const names = lines[header]!.split("|").slice(1, -1).map((c) => c.trim());
  assert.deepEqual(names, ["cache", "key", "bound (in memory)", "owner", "dropped by"]);
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    assert.equal(cells.length, 5, line);
    const [cache, key, bound, owner, dropped] = cells as [string, string, string, string, string];
    // The owners: each `src/...` path, and files named after one (`xml.ts` beside result_json.ts).
    const owners: string[] = [];
    for (const [, path] of owner.matchAll(/`([^`]+\.ts)`/g)) {
      owners.push(path!.startsWith("src/") ? path! : owners.at(-1)!.replace(/[^/]+$/, path!));
    }
    rows.push({ cache, key, bound, owners, dropped });
  }
  return rows;
}

Deno.test("docs/design.md: every row of the cache table names its key, bound, an existing owner and what drops it", async () => {
  const rows = cacheTable(await Deno.readTextFile(DESIGN));
  assert.ok(rows.length >= 25, `${rows.length} rows`);
  const names = new Set<string>();
  for (const row of rows) {
    assert.ok(!names.has(row.cache), `one row per cache: ${row.cache}`);
    names.add(row.cache);
    for (const cell of [row.cache, row.key, row.bound, row.dropped]) {
      assert.ok(cell.length > 0, `${row.cache}: every cell filled`);
    }
    assert.ok(row.owners.length > 0, `${row.cache}: an owner`);
    for (const owner of row.owners) {
      const info = await Deno.stat(new URL(owner, ROOT)).catch(() => null);
      assert.ok(info?.isFile, `${row.cache}: its owner ${owner} exists`);
    }
  }
});

Deno.test("docs/design.md: every module of src/ that makes an LruCache, a SlotTable or a WeakMap owns a row of the cache table", async () => {
  const owners = new Set(cacheTable(await Deno.readTextFile(DESIGN)).flatMap((r) => r.owners));
  const makers: string[] = [];
  for await (const path of walk("src")) {
    if (!path.endsWith(".ts")) continue;
    const text = await Deno.readTextFile(new URL(path, ROOT));
    if (/new (LruCache|SlotTable|WeakMap)\b/.test(text)) makers.push(path);
  }
  assert.ok(makers.length > 10, `${makers.length} modules`);
  const missing = makers.filter((path) => !owners.has(path));
  assert.deepEqual(missing, [], "modules making a cache with no row in the table");
});
