/**
 * The field catalogue: every name the `get` parameter accepts, derived from the
 * result layout, `RESULT_LAYOUT` in src/base/types.ts (docs/decisions.md, "get" and "Layout").
 *
 * Three kinds of name exist, all matched case-insensitively:
 * - a top-level name: `ip` or a group (`geoLocation`, `timezone`, `flag`, `currency`,
 *   `connection`, `userAgent`, `security`, and the opt-in `risk`);
 * - a bare name: a direct child of a group (`country`, `postal_Code`, `code`, `isTor`,
 *   and `userAgent`'s parts `browser`, `engine`, `os`, `device`, `cpu`); these are
 *   unique across groups, so a bare name is never ambiguous;
 * - a dotted path to any node below the top level (`currency.code`,
 *   `userAgent.browser`, `userAgent.browser.name`). The `name`, `version`, `type`, ...
 *   inside userAgent's parts are reachable only this way.
 *
 * Everything here is computed once, at module load, from `SELECTABLE_LAYOUT`.
 */

import { isLayoutLeaf, type LayoutGroup, SELECTABLE_LAYOUT } from "../../base/types.ts";

/** One node of the layout. */
export interface FieldInfo {
  /** Canonical dotted path, e.g. `geoLocation.city`, `userAgent.browser.name`, `ip`. */
  readonly path: string;
  /** The path split on dots (canonical spelling). */
  readonly segments: readonly string[];
  /** Position in a pre-order walk of the layout (`ip` is 0): the output order. */
  readonly order: number;
  /** Whether the node holds an object (a group or a userAgent part). */
  readonly isObject: boolean;
  /** Canonical children in layout order; empty for leaves. */
  readonly children: readonly string[];
}

/** How a requested name was understood. */
export interface FieldRef {
  /** `path`: kept inside its parents (top-level names included); `bare`: flat under `data`. */
  readonly kind: "path" | "bare";
  readonly field: FieldInfo;
}

function walk(group: LayoutGroup, parents: readonly string[], out: FieldInfo[]): void {
  for (const [key, child] of Object.entries(group)) {
    const segments = [...parents, key];
    const leaf = isLayoutLeaf(child);
    out.push({
      path: segments.join("."),
      segments,
      order: out.length,
      isObject: !leaf,
      children: leaf ? [] : Object.keys(child),
    });
    if (!leaf) walk(child, segments, out);
  }
}

/** The names of one layout: what `get` accepts for an answer of that shape. */
export interface FieldCatalogue {
  /** Every node, in pre-order: the output order. The first is always included. */
  readonly fields: readonly FieldInfo[];
  readonly byPath: ReadonlyMap<string, FieldInfo>;
  /** The names an unknown-name error lists: top-level names, each group followed by its bare names. */
  readonly listed: readonly string[];
  /** Resolves one requested name, case-insensitively; `undefined` when unknown. */
  resolve(name: string): FieldRef | undefined;
}

/**
 * The catalogue of a layout (the lookup result's, or another answer's such as
 * the ASN view's). Throws when a bare name would be ambiguous.
 */
export function createFieldCatalogue(layout: LayoutGroup): FieldCatalogue {
  const fields: FieldInfo[] = [];
  walk(layout, [], fields);
  const lookup = buildLookup(fields);
  return {
    fields,
    byPath: new Map(fields.map((f) => [f.path, f])),
    listed: fields.filter((f) => f.segments.length <= 2).map((f) =>
      f.segments[f.segments.length - 1]!
    ),
    resolve: (name) => lookup.get(name.toLowerCase()),
  };
}

/** The lookup result's catalogue (`SELECTABLE_LAYOUT`). */
export const RESULT_FIELDS: FieldCatalogue = createFieldCatalogue(SELECTABLE_LAYOUT);

/** Every node of the layout, in pre-order (`ip`, `geoLocation`, `geoLocation.continent`, …). */
export const FIELDS: readonly FieldInfo[] = RESULT_FIELDS.fields;

/** Field by canonical dotted path. */
export const FIELD_BY_PATH: ReadonlyMap<string, FieldInfo> = RESULT_FIELDS.byPath;

/** The group names, in layout order. */
export const GROUP_NAMES: readonly string[] = FIELDS
  .filter((f) => f.segments.length === 1 && f.isObject)
  .map((f) => f.path);

/** Bare names (direct children of a group), in layout order. */
export const BARE_NAMES: readonly string[] = FIELDS
  .filter((f) => f.segments.length === 2)
  .map((f) => f.segments[1]!);

/**
 * The names listed to a client that asked for an unknown one: `ip`, then each group
 * followed by its bare names, in layout order. Dotted paths are valid too but not listed.
 */
export const LISTED_NAMES: readonly string[] = RESULT_FIELDS.listed;

function buildLookup(fields: readonly FieldInfo[]): ReadonlyMap<string, FieldRef> {
  const map = new Map<string, FieldRef>();
  const add = (name: string, ref: FieldRef): void => {
    const key = name.toLowerCase();
    const previous = map.get(key);
    if (previous !== undefined) {
      throw new Error(
        `Field name ${
          JSON.stringify(name)
        } is ambiguous: ${previous.field.path} and ${ref.field.path}`,
      );
    }
    map.set(key, ref);
  };
  for (const field of fields) {
    add(field.path, { kind: "path", field });
    if (field.segments.length === 2) add(field.segments[1]!, { kind: "bare", field });
  }
  return map;
}

/**
 * Resolves one requested name, case-insensitively; `undefined` when unknown.
 *
 * @example resolveFieldName("CITY") // { kind: "bare", field: <geoLocation.city> }
 */
export function resolveFieldName(name: string): FieldRef | undefined {
  return RESULT_FIELDS.resolve(name);
}
