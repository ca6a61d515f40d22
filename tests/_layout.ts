/** The spec's response layout, kept independent of src/format/fields.ts on purpose. */

import assert from "node:assert/strict";
import type { LookupResult } from "../src/types.ts";

/** Every key of the response layout, in order; `null` marks a leaf. */
type Layout<T> = {
  [K in keyof T]-?: NonNullable<T[K]> extends object ? Layout<NonNullable<T[K]>> : null;
};
const name = { name: null, version: null };
export const SPEC_LAYOUT: Layout<LookupResult> = {
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
    browser: name,
    engine: name,
    os: name,
    device: { type: null, vendor: null, model: null },
    cpu: { architecture: null },
  },
  security: { isVpn: null, isTor: null, isThreat: null },
};

/** Asserts `value` has exactly the keys of `layout`, in order, at every level. */
export function assertLayout(value: unknown, layout: object, where = "data"): void {
  assert.ok(value !== null && typeof value === "object", `${where} is not an object`);
  assert.deepEqual(Object.keys(value), Object.keys(layout), where);
  for (const [key, sub] of Object.entries(layout)) {
    if (sub !== null) assertLayout((value as Record<string, unknown>)[key], sub, `${where}.${key}`);
  }
}
