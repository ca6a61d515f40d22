/**
 * The lookup as a function with properties (the `Lookup` of before
 * AddressLookup), for the callers not moved to AddressLookup's methods yet.
 *
 * @deprecated A bridge: src/core/enrich/enricher.ts and src/service/mcp/tools.ts
 * call `Served.lookup` as a function; once they call `Served.addressLookup`'s
 * methods (and src/core/lookup/item.ts's lookupItem), this file, the `Lookup`
 * interface and `Served.lookup` go.
 */

import type { AddressLookup, Lookup, LookupOptions } from "./lookup.ts";

/** `lookup`'s methods as the old function with properties (made once per data set). */
export function lookupFunction(lookup: AddressLookup): Lookup {
  return Object.assign((ipText: string, options?: LookupOptions) => lookup.find(ipText, options), {
    detail: (ipText: string, options?: LookupOptions) => lookup.detail(ipText, options),
    item: (ipText: string, options?: LookupOptions) => lookup.item(ipText, options),
    withoutCacheFills: <T>(scan: () => T): T => lookup.withoutCacheFills(scan),
  });
}
