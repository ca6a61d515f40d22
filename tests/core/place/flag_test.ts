import assert from "node:assert/strict";
import { flagFor } from "../../../src/core/place/flag.ts";
import type { Flag } from "../../../src/base/types.ts";

const CASES: Array<{ input: string | null; expected: Flag }> = [
  { input: "US", expected: { flag_Icon: "🇺🇸", flag_unicode: "U+1F1FA U+1F1F8" } },
  { input: "DE", expected: { flag_Icon: "🇩🇪", flag_unicode: "U+1F1E9 U+1F1EA" } },
  { input: "GB", expected: { flag_Icon: "🇬🇧", flag_unicode: "U+1F1EC U+1F1E7" } },
  { input: "gb", expected: { flag_Icon: "🇬🇧", flag_unicode: "U+1F1EC U+1F1E7" } },
  { input: "AZ", expected: { flag_Icon: "🇦🇿", flag_unicode: "U+1F1E6 U+1F1FF" } },
  { input: null, expected: { flag_Icon: null, flag_unicode: null } },
  { input: "", expected: { flag_Icon: null, flag_unicode: null } },
  { input: "U", expected: { flag_Icon: null, flag_unicode: null } },
  { input: "USA", expected: { flag_Icon: null, flag_unicode: null } },
  { input: "U1", expected: { flag_Icon: null, flag_unicode: null } },
  { input: " US", expected: { flag_Icon: null, flag_unicode: null } },
  { input: "ÜS", expected: { flag_Icon: null, flag_unicode: null } },
];

for (const { input, expected } of CASES) {
  Deno.test(`flagFor(${JSON.stringify(input)}) is ${expected.flag_unicode ?? "all null"}`, () => {
    assert.deepEqual(flagFor(input), expected);
  });
}

Deno.test("flagFor emoji is exactly the two regional indicators named in flag_unicode", () => {
  const { flag_Icon, flag_unicode } = flagFor("JP");
  const points = [...(flag_Icon ?? "")].map((ch) =>
    `U+${ch.codePointAt(0)?.toString(16).toUpperCase()}`
  );
  assert.equal(points.join(" "), flag_unicode);
});
