import assert from "node:assert/strict";
import { capInput, ECHO_LIMIT, quoteInput } from "../../src/base/errors.ts";
import { parseFieldSelection } from "../../src/core/format/select.ts";
import { parseIp } from "../../src/base/ip/parse.ts";

const EMOJI = "😀"; // one code point, two UTF-16 units
const COMBINED = "e\u0301"; // "é" as two code points: a letter and a combining accent

/** Code points of a text (what the cap counts). */
const points = (text: string) => [...text].length;

const CASES: Array<{ name: string; input: string; shown: string }> = [
  { name: "short ASCII", input: "abc", shown: "abc" },
  { name: "exactly the limit", input: "a".repeat(ECHO_LIMIT), shown: "a".repeat(ECHO_LIMIT) },
  { name: "one over", input: "a".repeat(ECHO_LIMIT + 1), shown: `${"a".repeat(ECHO_LIMIT)}…` },
  { name: "1,000 emoji", input: EMOJI.repeat(1000), shown: `${EMOJI.repeat(ECHO_LIMIT)}…` },
  { name: "64 emoji (128 units)", input: EMOJI.repeat(64), shown: EMOJI.repeat(64) },
  {
    name: "an emoji at the cut",
    input: `${"a".repeat(63)}${EMOJI}b`,
    shown: `${"a".repeat(63)}${EMOJI}…`,
  },
  {
    name: "combining marks count one each",
    input: COMBINED.repeat(100),
    shown: `${COMBINED.repeat(ECHO_LIMIT / 2)}…`,
  },
  {
    name: "a letter under 10,000 combining marks",
    input: `a${"\u0301".repeat(10_000)}`,
    shown: `a${"\u0301".repeat(ECHO_LIMIT - 1)}…`,
  },
];

for (const { name, input, shown } of CASES) {
  Deno.test(`capInput() keeps at most ${ECHO_LIMIT} code points: ${name}`, () => {
    const capped = capInput(input);
    assert.equal(capped, shown);
    assert.ok(capped.isWellFormed(), "no surrogate pair cut in half");
    assert.ok(points(capped) <= ECHO_LIMIT + 1);
  });
}

Deno.test("quoteInput() caps before quoting, so 1,000 emoji stay small", () => {
  const quoted = quoteInput(EMOJI.repeat(1000));
  assert.equal(quoted, JSON.stringify(`${EMOJI.repeat(ECHO_LIMIT)}…`));
});

/** The one cap holds at each place that echoes input. */
const ECHOES: Array<{ name: string; fail: (input: string) => void }> = [
  { name: "an invalid IP address", fail: (input) => parseIp(input) },
  { name: "an unknown get name", fail: (input) => parseFieldSelection(input) },
];

for (const { name, fail } of ECHOES) {
  Deno.test(`the error for ${name} echoes 1,000 emoji capped, pairs whole`, () => {
    assert.throws(() => fail(EMOJI.repeat(1000)), (error: Error) => {
      assert.ok(error.message.includes(`"${EMOJI.repeat(ECHO_LIMIT)}…"`), error.message);
      assert.ok(!error.message.includes(EMOJI.repeat(ECHO_LIMIT + 1)), "not more");
      assert.ok(error.message.isWellFormed());
      return true;
    });
  });
}
