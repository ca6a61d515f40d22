/**
 * The field catalogue: every name the `get` parameter accepts, derived from the
 * `LookupResult` layout (decisions.md, "get" and "Layout").
 *
 * Three kinds of name exist, all matched case-insensitively:
 * - a top-level name: `ip` or a group (`geoLocation`, `timezone`, `flag`, `currency`,
 *   `connection`, `userAgent`, `security`);
 * - a bare name: a direct child of a group (`country`, `postal_Code`, `code`, `isTor`,
 *   and `userAgent`'s parts `browser`, `engine`, `os`, `device`, `cpu`); these are
 *   unique across groups, so a bare name is never ambiguous;
 * - a dotted path to any node below the top level (`currency.code`,
 *   `userAgent.browser`, `userAgent.browser.name`). The `name`, `version`, `type`, ...
 *   inside userAgent's parts are reachable only this way.
 *
 * Everything here is computed once, at module load, from the constant `LAYOUT`.
 */

import type { LookupResult } from "../types.ts";

/** Mirror of an object type: every key present, nested objects mirrored, leaves `null`. */
type Layout<T> = {
  readonly [K in keyof T]-?: T[K] extends object ? Layout<T[K]> : null;
};

/** Shape of a lookup result, in output order. `satisfies` keeps it in step with types.ts. */
const LAYOUT = {
  ip: null,
  geoLocation: {
    continent: null,
    continentCode: null,
    country: null,
    countryCode: null,
    capital: null,
    region: null,
    regionCode: null,
    city: null,
    postal_Code: null,
    dial_code: null,
    is_in_eu: null,
    latitude: null,
    longitude: null,
    accuracy_radius: null,
  },
  timezone: {
    time_zone: null,
    abbr: null,
    offset: null,
    is_dst: null,
    utc: null,
    current_time: null,
  },
  flag: { flag_Icon: null, flag_unicode: null },
  currency: { code: null, symbol: null, name: null, name_plural: null, hex_unicode: null },
  connection: {
    asn_number: null,
    asn_org: null,
    isp: null,
    org: null,
    domain: null,
    connection_type: null,
  },
  userAgent: {
    browser: { name: null, version: null },
    engine: { name: null, version: null },
    os: { name: null, version: null },
    device: { type: null, vendor: null, model: null },
    cpu: { architecture: null },
  },
  security: { isVpn: null, isTor: null, isThreat: null },
} as const satisfies Layout<LookupResult>;

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

type LayoutNode = null | { readonly [key: string]: LayoutNode };

function walk(node: LayoutNode, parents: readonly string[], out: FieldInfo[]): void {
  if (node === null) return;
  for (const [key, child] of Object.entries(node)) {
    const segments = [...parents, key];
    out.push({
      path: segments.join("."),
      segments,
      order: out.length,
      isObject: child !== null,
      children: child === null ? [] : Object.keys(child),
    });
    walk(child, segments, out);
  }
}

function buildFields(): readonly FieldInfo[] {
  const out: FieldInfo[] = [];
  walk(LAYOUT, [], out);
  return out;
}

/** Every node of the layout, in pre-order (`ip`, `geoLocation`, `geoLocation.continent`, …). */
export const FIELDS: readonly FieldInfo[] = buildFields();

/** Field by canonical dotted path. */
export const FIELD_BY_PATH: ReadonlyMap<string, FieldInfo> = new Map(
  FIELDS.map((f) => [f.path, f]),
);

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
export const LISTED_NAMES: readonly string[] = FIELDS
  .filter((f) => f.segments.length <= 2)
  .map((f) => f.segments[f.segments.length - 1]!);

function buildLookup(): ReadonlyMap<string, FieldRef> {
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
  for (const field of FIELDS) {
    add(field.path, { kind: "path", field });
    if (field.segments.length === 2) add(field.segments[1]!, { kind: "bare", field });
  }
  return map;
}

const LOOKUP = buildLookup();

/**
 * Resolves one requested name, case-insensitively; `undefined` when unknown.
 *
 * @example resolveFieldName("CITY") // { kind: "bare", field: <geoLocation.city> }
 */
export function resolveFieldName(name: string): FieldRef | undefined {
  return LOOKUP.get(name.toLowerCase());
}
