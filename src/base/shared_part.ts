/**
 * Shared output parts, by contract. The lookup core makes some parts of a
 * result once and puts the same object into many answers: a place's
 * geoLocation, flag and currency, a network's connection, a zone's time within
 * one second, a parsed user agent, a security verdict. `sharedPart` is the one
 * way to make such a part: it freezes the whole tree and marks the object.
 * The serialisers' one rule (result_json.ts, xml.ts, csv.ts): the text written
 * for a marked object may be remembered, in its {@link rememberedTexts}; every
 * other object is written anew each time.
 */

/**
 * A shared part's remembered texts, one key per serialiser: a hidden property
 * (a symbol, not enumerable, so no serialiser writes it and no comparison sees
 * it) holding a mutable record, made before the part is frozen. Read as a
 * property, not looked up in a WeakMap: a request reads seven of them. A hot
 * serialiser reads `part[SHARED_TEXTS]` at a call site of its own per part
 * (one shape each), where a shared reader would see every shape; any other
 * caller uses {@link rememberedTexts}.
 */
export const SHARED_TEXTS: unique symbol = Symbol("texts written for this shared part");
const TEXTS = SHARED_TEXTS;

/** Parts frozen before they were shared (no hidden property can be added): their texts live here. */
const textsOfFrozen = new WeakMap<object, Record<string, unknown>>();

/**
 * Deeply freezes `value`, marks it shared and returns it.
 *
 * @example const EMPTY = sharedPart({ code: null, symbol: null });
 */
export function sharedPart<T extends object>(value: T): T {
  if (Object.isExtensible(value)) {
    // Never frozen, so never shared yet (a shared part is frozen).
    Object.defineProperty(value, TEXTS, { value: {} });
  } else {
    if (rememberedTexts(value) !== undefined) return value; // shared already
    textsOfFrozen.set(value, {});
  }
  deepFreeze(value);
  return value;
}

/** True for an object made by {@link sharedPart}: immutable, its written text may be remembered. */
export function isSharedPart(value: unknown): value is object {
  return typeof value === "object" && value !== null && rememberedTexts(value) !== undefined;
}

/**
 * The record where serialisers remember what they wrote for a shared part
 * (each under its own key: `json`, `xml`, `csv`); undefined for any other object.
 */
export function rememberedTexts(value: object): Record<string, unknown> | undefined {
  return (value as { [TEXTS]?: Record<string, unknown> })[TEXTS] ?? textsOfFrozen.get(value);
}

function deepFreeze(value: object): void {
  for (const child of Object.values(value)) {
    if (typeof child === "object" && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
  Object.freeze(value);
}
