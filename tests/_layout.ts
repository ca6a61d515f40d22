/** The result layout the tests hold responses against, derived from its one definition. */

import assert from "node:assert/strict";
import { isLayoutLeaf, type LayoutGroup, RESULT_LAYOUT } from "../src/base/types.ts";

/** Every key of the response layout, in order; `null` marks a leaf. */
export type KeyLayout = { [key: string]: KeyLayout | null };

function keysOf(group: LayoutGroup): KeyLayout {
  const out: KeyLayout = {};
  for (const [key, node] of Object.entries(group)) {
    out[key] = isLayoutLeaf(node) ? null : keysOf(node);
  }
  return out;
}

/** The layout of `data` (src/base/types.ts, RESULT_LAYOUT); the served OpenAPI is checked against it. */
export const SPEC_LAYOUT: KeyLayout = keysOf(RESULT_LAYOUT);

/** Asserts `value` has exactly the keys of `layout`, in order, at every level. */
export function assertLayout(value: unknown, layout: object, where = "data"): void {
  assert.ok(value !== null && typeof value === "object", `${where} is not an object`);
  assert.deepEqual(Object.keys(value), Object.keys(layout), where);
  for (const [key, sub] of Object.entries(layout)) {
    if (sub !== null) assertLayout((value as Record<string, unknown>)[key], sub, `${where}.${key}`);
  }
}
