/**
 * The `get` parameter: parsing a field list into a compiled plan, and applying
 * the plan to a lookup result (decisions.md, "get").
 */

import { ownCopy } from "../../base/cache/own_copy.ts";
import { BadRequestError, quoteInput } from "../../base/errors.ts";
import type { FailedItem, Json, LookupResult } from "../../base/types.ts";
import { type FieldCatalogue, type FieldInfo, RESULT_FIELDS } from "./fields.ts";

/** One output key: the value found at `from` (relative path), or an object built by `children`. */
interface Step {
  readonly key: string;
  readonly from: readonly string[];
  readonly children: readonly Step[] | null;
}

/** A parsed, validated `get` value, compiled once into a plan. Treat as opaque. */
export interface FieldSelection {
  /** The requested names, canonical spelling, deduplicated, in layout order (for logs/tests). */
  readonly names: readonly string[];
  /** Output steps in output order; `ip` first. */
  readonly steps: readonly Step[];
  /** Whether it names the opt-in `risk` group or a field of it: the lookup computes it only then. */
  readonly risk: boolean;
  /** Likewise for the opt-in `network` group (the matched network of each source). */
  readonly network: boolean;
  /** Whether it names `timezone` or a field of it: the lookup skips the zone's facts otherwise. */
  readonly timezone: boolean;
  /** Whether it names `userAgent` or a field of it (`browser` included). */
  readonly userAgent: boolean;
}

/** Most unknown names quoted back in an error message. */
const MAX_UNKNOWN = 5;
/** Bound of the parsed-selection cache (cleared when full). */
const CACHE_LIMIT = 512;
/** Longest `get` value cached (every name of the catalogue once is far shorter). */
const LONGEST_CACHED = 1024;

/**
 * The `get` parser of one answer's layout (see createFieldCatalogue); `examples`
 * are dotted paths the unknown-name message shows.
 */
export function createFieldSelector(
  catalogue: FieldCatalogue,
  examples: string,
): (get: string | undefined | null) => FieldSelection | null {
  const cache = new Map<string, FieldSelection>();
  const validNames = `${catalogue.listed.join(", ")}, or a dotted path such as ${examples}`;
  return (get) => {
    if (get === undefined || get === null) return null;
    const cached = cache.get(get);
    if (cached !== undefined) return cached;
    const selection = compile(get, catalogue, validNames);
    if (selection === null) return null;
    // Not a long one (`get=city,,,,…` is valid), and a copy: the value is a slice of the URL.
    if (get.length > LONGEST_CACHED) return selection;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(ownCopy(get), selection);
    return selection;
  };
}

const parseResultSelection = createFieldSelector(
  RESULT_FIELDS,
  "currency.code or userAgent.browser.name",
);

/**
 * Parses a `get` value: comma-separated names, case-insensitive, spaces around
 * names ignored, empty entries skipped. Empty or absent → `null` (everything).
 * Results are cached by the raw value (bounded).
 *
 * @throws {BadRequestError} when a name is unknown; the message lists valid names.
 * @example parseFieldSelection("city, currency.code")?.names // ["geoLocation.city", "currency.code"]
 */
export function parseFieldSelection(get: string | undefined | null): FieldSelection | null {
  return parseResultSelection(get);
}

function unknownNamesError(unknown: readonly string[], validNames: string): BadRequestError {
  const shown = unknown.slice(0, MAX_UNKNOWN).map((name) => quoteInput(name)).join(", ");
  const more = unknown.length > MAX_UNKNOWN ? ` (and ${unknown.length - MAX_UNKNOWN} more)` : "";
  const noun = unknown.length === 1 ? "field" : "fields";
  return new BadRequestError(
    `Unknown ${noun} ${shown}${more} in get: valid names are ${validNames}`,
  );
}

/** A node of the tree of dotted-path requests. */
interface PathNode {
  readonly field: FieldInfo;
  whole: boolean;
  readonly children: Map<string, PathNode>;
}

function compile(
  get: string,
  catalogue: FieldCatalogue,
  validNames: string,
): FieldSelection | null {
  const unknown: string[] = [];
  const bare = new Map<string, FieldInfo>();
  const roots = new Map<string, PathNode>();
  const names = new Map<string, { name: string; order: number }>();

  for (const raw of get.split(",")) {
    const name = raw.trim();
    if (name === "") continue;
    const ref = catalogue.resolve(name);
    if (ref === undefined) {
      if (!unknown.includes(name)) unknown.push(name);
      continue;
    }
    const { field } = ref;
    if (ref.kind === "bare") {
      bare.set(field.path, field);
      names.set(`bare:${field.path}`, { name: field.segments[1]!, order: field.order });
    } else {
      addPath(roots, field, catalogue);
      names.set(`path:${field.path}`, { name: field.path, order: field.order });
    }
  }
  if (unknown.length > 0) throw unknownNamesError(unknown, validNames);
  if (names.size === 0) return null;

  const entries: { order: number; step: Step }[] = [];
  for (const field of bare.values()) {
    entries.push({
      order: field.order,
      step: { key: field.segments[1]!, from: field.segments, children: null },
    });
  }
  // The layout's first key (`ip`) is always included, first.
  const first = catalogue.fields[0]!.path;
  for (const node of roots.values()) {
    if (node.field.path === first) continue;
    entries.push({ order: node.field.order, step: toStep(node) });
  }
  // Stable sort: a group's own entry (nested or whole) precedes its flat leaves.
  entries.sort((a, b) => a.order - b.order);
  const always: Step = { key: first, from: [first], children: null };
  const named = [...bare.values(), ...[...roots.values()].map((n) => n.field)];
  return {
    names: [...names.values()].sort((a, b) => a.order - b.order).map((n) => n.name),
    steps: [always, ...entries.map((e) => e.step)],
    risk: named.some((f) => f.segments[0] === "risk"),
    network: named.some((f) => f.segments[0] === "network"),
    timezone: named.some((f) => f.segments[0] === "timezone"),
    userAgent: named.some((f) => f.segments[0] === "userAgent"),
  };
}

function addPath(roots: Map<string, PathNode>, field: FieldInfo, catalogue: FieldCatalogue): void {
  let level = roots;
  let node: PathNode | undefined;
  for (let i = 0; i < field.segments.length; i++) {
    const path = field.segments.slice(0, i + 1).join(".");
    node = level.get(path);
    if (node === undefined) {
      node = { field: catalogue.byPath.get(path)!, whole: false, children: new Map() };
      level.set(path, node);
    }
    level = node.children;
  }
  node!.whole = true;
}

function toStep(node: PathNode): Step {
  const key = node.field.segments[node.field.segments.length - 1]!;
  if (node.whole) return { key, from: [key], children: null };
  const children = [...node.children.values()]
    .sort((a, b) => a.field.order - b.field.order)
    .map(toStep);
  return { key, from: [key], children };
}

function run(steps: readonly Step[], source: Record<string, unknown>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const step of steps) {
    let value: unknown = source;
    for (const segment of step.from) {
      value = value !== null && typeof value === "object"
        ? (value as Record<string, unknown>)[segment]
        : undefined;
    }
    if (step.children === null) {
      out[step.key] = value === undefined ? null : value as Json;
    } else {
      out[step.key] = value !== null && typeof value === "object"
        ? run(step.children, value as Record<string, unknown>)
        : null;
    }
  }
  return out;
}

/**
 * Applies a selection to one item. `ip` always comes first; a group stays whole
 * under its name, a bare name is flat under `data`, a dotted path keeps its parents
 * (several paths of one parent merge). Keys follow the layout order, not the request.
 * A `FailedItem` and a `null` selection pass through unchanged. The result may share
 * sub-objects with `item`: treat both as read-only.
 *
 * @example applySelection(result, parseFieldSelection("currency.code,city"))
 * // { ip: "8.8.8.8", city: "Mountain View", currency: { code: "USD" } }
 */
export function applySelection(
  item: LookupResult | FailedItem,
  selection: FieldSelection | null,
): Record<string, Json> {
  if (selection === null || "error" in item) return item as unknown as Record<string, Json>;
  return run(selection.steps, item as unknown as Record<string, unknown>);
}
