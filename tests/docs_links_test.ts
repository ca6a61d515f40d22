import assert from "node:assert/strict";

// Every relative link in the user's documentation leads somewhere: the file (or directory) exists,
// and a `#fragment` names a heading of the target, as GitHub makes heading anchors.

const ROOT = new URL("../", import.meta.url);

/** The documentation files whose links are checked, relative to the repository root. */
function documents(): string[] {
  const docs = [...Deno.readDirSync(new URL("docs/", ROOT))]
    .filter((entry) => entry.isFile && entry.name.endsWith(".md"))
    .map((entry) => `docs/${entry.name}`)
    .sort();
  return ["README.md", "CHANGELOG.md", "bench/README.md", ...docs];
}

/** The text outside fenced code blocks, with inline code spans kept as their bare text. */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line);
  }
  return lines;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link shows its text
    .replaceAll("`", "");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replaceAll(" ", "-");
}

/** The anchors of a markdown file's headings, numbered on repeats as GitHub does (`x`, `x-1`). */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The link targets in a markdown text (links and images), code excluded. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of prose(markdown)) {
    const text = line.replace(/`[^`]*`/g, "code");
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push(match[1]!);
    }
  }
  return targets;
}

function exists(url: URL): boolean {
  try {
    Deno.statSync(url);
    return true;
  } catch {
    return false;
  }
}

/** The relative links of `file` (its text `markdown`) that lead nowhere, each with the reason. */
export function brokenLinks(file: string, markdown: string, root: URL = ROOT): string[] {
  const broken: string[] = [];
  const base = new URL(file, root);
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const [path = "", fragment] = target.split("#", 2) as [string, string | undefined];
    const url = path === "" ? base : new URL(decodeURI(path), base);
    if (path !== "" && !exists(url)) {
      broken.push(`${file}: ${target}: no such file`);
      continue;
    }
    if (fragment === undefined || fragment === "") continue;
    if (!url.pathname.endsWith(".md")) {
      broken.push(`${file}: ${target}: a fragment on a file that is not markdown`);
      continue;
    }
    const text = path === "" ? markdown : Deno.readTextFileSync(url);
    if (!anchors(text).has(decodeURIComponent(fragment))) {
      broken.push(`${file}: ${target}: no heading with that anchor`);
    }
  }
  return broken;
}

Deno.test("every relative link in README.md, docs/, bench/README.md and CHANGELOG.md resolves", () => {
  const files = documents();
  assert.ok(files.includes("docs/api.md") && files.includes("docs/operations.md"), files.join());
  let checked = 0;
  const broken: string[] = [];
  for (const file of files) {
    const markdown = Deno.readTextFileSync(new URL(file, ROOT));
    checked += linkTargets(markdown).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t)).length;
    broken.push(...brokenLinks(file, markdown));
  }
  assert.deepEqual(broken, []);
  assert.ok(checked > 50, `only ${checked} relative links found: the link reader is broken`);
});

Deno.test("the link check finds a missing file, a missing heading, and ignores code", () => {
  const markdown = [
    "# Top",
    "## `GET /ip/{ip}` and more",
    "## Top",
    "See [a](#get-ipip-and-more), [b](#top-1), [c](#nowhere), [d](docs/none.md),",
    "[e](README.md#quick-start), [f](README.md#no-such-heading), ![g](docs/lookup-page.png),",
    "[h](https://example.com/x#y) and `[i](not-a-link.md)`.",
    "```",
    "[j](also-not-a-link.md)",
    "```",
  ].join("\n");
  assert.deepEqual(brokenLinks("x.md", markdown), [
    "x.md: #nowhere: no heading with that anchor",
    "x.md: docs/none.md: no such file",
    "x.md: README.md#no-such-heading: no heading with that anchor",
  ]);
});

Deno.test("heading anchors are GitHub's", () => {
  assert.equal(slug("`GET /bulk/{ip_list}` and `POST /bulk`"), "get-bulkip_list-and-post-bulk");
  assert.equal(
    slug("Switching from MaxMind / ipinfo / ip-api"),
    "switching-from-maxmind--ipinfo--ip-api",
  );
  assert.equal(slug("Workers: every core"), "workers-every-core");
  assert.equal(slug("Graceful shutdown on Deno 2.9"), "graceful-shutdown-on-deno-29");
  assert.equal(slug("`lang`: names in another language"), "lang-names-in-another-language");
});
