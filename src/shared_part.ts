/**
 * Shared output parts, by contract. The lookup core makes some parts of a
 * result once and puts the same object into many answers: a place's
 * geoLocation, flag and currency, a network's connection, a zone's time within
 * one second, a parsed user agent, a security verdict. `sharedPart` is the one
 * way to make such a part: it freezes the whole tree and marks the object.
 * The serialisers' one rule (result_json.ts, xml.ts, csv.ts): the text written
 * for a marked object may be remembered, keyed by the object (weakly); every
 * other object is written anew each time.
 */

const SHARED = new WeakSet<object>();

/**
 * Deeply freezes `value`, marks it shared and returns it.
 *
 * @example const EMPTY = sharedPart({ code: null, symbol: null });
 */
export function sharedPart<T extends object>(value: T): T {
  deepFreeze(value);
  SHARED.add(value);
  return value;
}

/** True for an object made by {@link sharedPart}: immutable, its written text may be remembered. */
export function isSharedPart(value: unknown): value is object {
  return typeof value === "object" && value !== null && SHARED.has(value);
}

function deepFreeze(value: object): void {
  for (const child of Object.values(value)) {
    if (typeof child === "object" && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
  Object.freeze(value);
}
