/**
 * The fields enrich adds to a CSV or TSV row: the answer's `get` selection
 * flattened with dots, as the API's CSV is (`security.isTor`, a bare name as
 * itself), without `ip` (the row has its address). The columns follow from
 * the selection alone, so the header is written before any row is answered.
 */

import {
  isLayoutLeaf,
  type Json,
  type LayoutGroup,
  type LookupResult,
  RESULT_LAYOUT,
  SELECTABLE_LAYOUT,
} from "../../base/types.ts";
import { applySelection, type FieldSelection } from "../format/select.ts";

export interface Column {
  /** The column's name, before the prefix: `country`, `security.isTor`. */
  name: string;
  /** Where its value sits in the selected answer. */
  segments: readonly string[];
  /** Where its value sits in the whole lookup result (its layout path). */
  source: readonly string[];
  /** Reads that value from a lookup result (undefined when absent). */
  read: (result: Record<string, Json>) => Json | undefined;
  /** Whether it comes from `security` or `risk` (what a time before the history cannot answer). */
  security: boolean;
}

/** The columns of `selection` (null: the whole default answer). */
export function columnsOf(selection: FieldSelection | null): Column[] {
  // A result whose every leaf holds its own layout path: the selection keeps the shape.
  const template = pathTemplate(
    selection?.risk || selection?.network ? SELECTABLE_LAYOUT : RESULT_LAYOUT,
    [],
  );
  const selected = applySelection(template as unknown as LookupResult, selection);
  const columns: Column[] = [];
  const walk = (value: Json, segments: string[]) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) walk(child, [...segments, key]);
      return;
    }
    const path = String(value);
    if (segments.length === 1 && segments[0] === "ip") return;
    columns.push({
      name: segments.join("."),
      segments,
      source: path.split("."),
      read: reader(path.split(".")),
      security: path.startsWith("security.") || path.startsWith("risk."),
    });
  };
  walk(selected as Json, []);
  return columns;
}

function pathTemplate(group: LayoutGroup, parents: string[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [key, node] of Object.entries(group)) {
    const segments = [...parents, key];
    out[key] = isLayoutLeaf(node) ? segments.join(".") : pathTemplate(node, segments);
  }
  return out;
}

/** A reader of the value at `segments`: the layout is at most three levels deep. */
function reader(segments: readonly string[]): (result: Record<string, Json>) => Json | undefined {
  const [a, b, c] = segments;
  const get = (value: Json | undefined, key: string) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, Json>)[key]
      : undefined;
  if (segments.length === 1) return (r) => r[a!];
  if (segments.length === 2) return (r) => get(r[a!], b!);
  if (segments.length === 3) return (r) => get(get(r[a!], b!), c!);
  return (r) => valueAt(r, segments);
}

/** The value at `segments` of an answer (undefined when absent). */
export function valueAt(
  answer: Record<string, Json>,
  segments: readonly string[],
): Json | undefined {
  let value: Json | undefined = answer;
  for (const segment of segments) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    value = (value as Record<string, Json>)[segment];
  }
  return value;
}
