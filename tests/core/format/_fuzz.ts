/** Random JSON trees for comparing a serialiser with its reference. */

import { sharedPart } from "../../../src/base/shared_part.ts";
import type { Json } from "../../../src/base/types.ts";
import { seededRandom } from "../../_random.ts";
import { HOSTILE } from "./_sample.ts";

const KEYS = [
  "",
  "ip",
  "city",
  "a",
  "b_c",
  "x.y",
  "item",
  "data",
  "error",
  "status",
  "responseArray",
];
const TEXTS = [...HOSTILE.map((h) => h.text), "plain", "-1", "+1", "=x", "@", "0", "true", "a,b"];

/**
 * A random JSON value of at most `depth` levels, objects and arrays included;
 * `nullInArrays: false` keeps null out of arrays (the old XML builder moved such
 * entries to the front of their list, a quirk the service never met: its lists
 * hold results and failed items).
 */
export function randomJson(next: () => number, depth: number, nullInArrays = true): Json {
  const pick = <T>(list: readonly T[]): T => list[next() % list.length]!;
  const kind = next() % (depth > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return next() % 2 === 0;
    case 2:
      return pick([0, -0, 1.5, -97.822, 15169, NaN, Infinity, -Infinity, 1e21, 1e-7]);
    case 3:
    case 4:
    case 5:
      return pick(TEXTS);
    case 6: {
      const length = next() % 4;
      return Array.from({ length }, () => {
        const entry = randomJson(next, depth - 1, nullInArrays);
        return entry === null && !nullInArrays ? "null" : entry;
      });
    }
    default: {
      const out: { [key: string]: Json } = {};
      const size = next() % 5;
      for (let i = 0; i < size; i++) out[pick(KEYS)] = randomJson(next, depth - 1, nullInArrays);
      if (next() % 3 === 0) sharedPart(out); // the serialisers remember its text
      return out;
    }
  }
}

/** `count` random values from a fixed seed. */
export function randomValues(
  count: number,
  depth: number,
  seed: number,
  nullInArrays = true,
): Json[] {
  const random = seededRandom(seed);
  const next = () => Math.floor(random() * 2 ** 32);
  return Array.from({ length: count }, () => randomJson(next, depth, nullInArrays));
}
