/**
 * One item lookup: an address given as text (a bulk list's item, an MCP
 * `lookup_many` address, an enriched record's field) in, its result or its
 * failed item out, with the API's status and message (what `/ip` answers for
 * the same address) and the error's code. What else fails (a bad `lang`, a
 * corrupt record) is thrown: it fails the whole call.
 *
 * A failed item's kind is its code (`itemErrorCode`), never its message text.
 */

import type { FailedItem, LookupResult } from "../../base/types.ts";
import type { LookupOptions } from "./lookup.ts";

export {
  failedItem,
  failedItemOf,
  isFailedItem,
  type ItemErrorCode,
  itemErrorCode,
} from "./item_error.ts";

/** What an item is looked up with: Lookup (src/core/lookup/lookup.ts), or a wrapper of it. */
export interface ItemLookup {
  item(ipText: string, options?: LookupOptions): LookupResult | FailedItem;
}

/**
 * The result of `input`, or its failed item (InvalidIpError's or
 * NotFoundError's status and message, the input capped) without an Error made
 * and thrown: a log of many unknown addresses pays for no stack traces.
 *
 * @example lookupItem(lookup, "not-an-ip") // { ip: "not-an-ip", error: { status: 404, message: "Invalid IP address ..." } }
 */
export function lookupItem(
  lookup: ItemLookup,
  input: string,
  options?: LookupOptions,
): LookupResult | FailedItem {
  return lookup.item(input, options);
}
