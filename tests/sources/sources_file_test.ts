import assert from "node:assert/strict";
import { parseSourcesFile } from "../../src/sources/sources_file.ts";

const parse = (source: Record<string, unknown>) =>
  parseSourcesFile({ sources: [{ url: "https://example.com/x", ...source }] }, "s.json")
    .sources[0]!;

Deno.test("sources file: licence and attribution are optional and shown as not stated", () => {
  const spec = parse({ name: "office", kind: "allow", format: "ip-list" });
  assert.equal(spec.license, "not stated");
  assert.equal(spec.attribution, "not stated");
  assert.equal(
    parse({ name: "o", kind: "allow", format: "ip-list", license: "MIT" }).license,
    "MIT",
  );
});

Deno.test("sources file: provider, minCount and the location kind are checked", () => {
  const ok = parse({ name: "i", kind: "threat", format: "ipsum", minCount: 4 });
  assert.equal(ok.minCount, 4);
  assert.equal(
    parse({ name: "r", kind: "relay", format: "geofeed", provider: "Apple" }).provider,
    "Apple",
  );
  const refused: [Record<string, unknown>, RegExp][] = [
    [
      { name: "t", kind: "tor", format: "ip-list", provider: "X" },
      /\(t\) provider: only hosting and relay/,
    ],
    [
      { name: "a", kind: "threat", format: "ip-list", minCount: 3 },
      /\(a\) minCount: only the "ipsum"/,
    ],
    [
      { name: "b", kind: "threat", format: "ipsum", minCount: 0 },
      /\(b\) minCount 0: expected a whole number/,
    ],
    [
      { name: "l", kind: "location", format: "ip-list" },
      /\(l\) format "ip-list" cannot give a location list: use geofeed/,
    ],
    [
      { name: "d", kind: "threat", format: "drop-jsonl" },
      /\(d\) format "drop-jsonl": expected one of/,
    ],
    [
      { name: "e", kind: "relay", format: "geofeed", license: "" },
      /\(e\) license "": expected a non-empty string/,
    ],
  ];
  for (const [source, expected] of refused) {
    assert.throws(() => parse(source), expected, JSON.stringify(source));
  }
});
