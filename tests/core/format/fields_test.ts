import assert from "node:assert/strict";
import {
  BARE_NAMES,
  FIELDS,
  GROUP_NAMES,
  LISTED_NAMES,
  resolveFieldName,
} from "../../../src/core/format/fields.ts";
import { sampleResult } from "./_sample.ts";

/** Every dotted path of a plain object, in key order (pre-order). */
function pathsOf(value: unknown, prefix = ""): string[] {
  if (value === null || typeof value !== "object") return [];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    out.push(path, ...pathsOf(child, path));
  }
  return out;
}

Deno.test("FIELDS lists every path of a full LookupResult, in layout order, then the opt-in risk and network", () => {
  const own = FIELDS.filter((f) => f.segments[0] !== "risk" && f.segments[0] !== "network");
  assert.deepEqual(own.map((f) => f.path), pathsOf(sampleResult()));
  assert.deepEqual(FIELDS.slice(own.length).map((f) => f.path), [
    "risk",
    "risk.anonymizer",
    "risk.abuse",
    "risk.provider",
    "risk.crawler",
    "risk.matches",
    "risk.reason",
    "risk.asOf",
    "network",
  ]);
  assert.deepEqual(FIELDS.map((f) => f.order), FIELDS.map((_, i) => i));
});

Deno.test("GROUP_NAMES are the seven groups of the layout and the opt-in risk", () => {
  assert.deepEqual(GROUP_NAMES, [
    "geoLocation",
    "timezone",
    "flag",
    "currency",
    "connection",
    "userAgent",
    "security",
    "risk",
  ]);
});

Deno.test("bare names are unique across groups, case-insensitively, and clash with no top-level name", () => {
  const lower = BARE_NAMES.map((n) => n.toLowerCase());
  assert.equal(new Set(lower).size, lower.length);
  const topLevel = ["ip", ...GROUP_NAMES].map((n) => n.toLowerCase());
  for (const name of lower) assert.ok(!topLevel.includes(name), name);
});

Deno.test("bare names include userAgent's parts but not the names inside them", () => {
  for (const part of ["browser", "engine", "os", "device", "cpu"]) {
    assert.ok(BARE_NAMES.includes(part), part);
  }
  for (const inner of ["version", "type", "vendor", "model", "architecture"]) {
    assert.ok(!BARE_NAMES.includes(inner), inner);
    assert.equal(resolveFieldName(inner), undefined, inner);
  }
  // `name` is currency's own leaf, never userAgent.browser.name and the like.
  assert.equal(resolveFieldName("name")?.field.path, "currency.name");
  assert.ok(BARE_NAMES.includes("postal_Code"));
  assert.ok(BARE_NAMES.includes("flag_Icon"));
  assert.ok(BARE_NAMES.includes("code"));
});

Deno.test("LISTED_NAMES is ip, then each group followed by its bare names", () => {
  assert.deepEqual(LISTED_NAMES.slice(0, 4), ["ip", "geoLocation", "continent", "continentCode"]);
  // The top-level leaves: ip and the opt-in network.
  assert.equal(LISTED_NAMES.length, 2 + GROUP_NAMES.length + BARE_NAMES.length);
  assert.ok(LISTED_NAMES.indexOf("security") < LISTED_NAMES.indexOf("isThreat"));
});

Deno.test("resolveFieldName matches case-insensitively and returns canonical fields", () => {
  const cases: { name: string; kind: "path" | "bare" | undefined; path?: string }[] = [
    { name: "ip", kind: "path", path: "ip" },
    { name: "IP", kind: "path", path: "ip" },
    { name: "geolocation", kind: "path", path: "geoLocation" },
    { name: "city", kind: "bare", path: "geoLocation.city" },
    { name: "POSTAL_CODE", kind: "bare", path: "geoLocation.postal_Code" },
    { name: "flag_icon", kind: "bare", path: "flag.flag_Icon" },
    { name: "code", kind: "bare", path: "currency.code" },
    { name: "istor", kind: "bare", path: "security.isTor" },
    { name: "browser", kind: "bare", path: "userAgent.browser" },
    { name: "Currency.Code", kind: "path", path: "currency.code" },
    { name: "useragent.browser.NAME", kind: "path", path: "userAgent.browser.name" },
    { name: "userAgent.device", kind: "path", path: "userAgent.device" },
    { name: "timezone.time_zone", kind: "path", path: "timezone.time_zone" },
    { name: "foo", kind: undefined },
    { name: "geoLocation.foo", kind: undefined },
    { name: "currency.code.x", kind: undefined },
    { name: "userAgent.name", kind: undefined },
    { name: "city.", kind: undefined },
    { name: ".city", kind: undefined },
    { name: "data", kind: undefined },
    { name: "", kind: undefined },
  ];
  for (const c of cases) {
    const ref = resolveFieldName(c.name);
    assert.equal(ref?.kind, c.kind, c.name);
    assert.equal(ref?.field.path, c.path, c.name);
  }
});
