/**
 * The shape of a lookup result, defined once: spec section 2.2 with
 * docs/decisions.md's names ("Names the spec garbles", "Layout").
 *
 * `RESULT_LAYOUT` is the one definition: its key order is the output order, and
 * each leaf says its JSON type and whether it can be null. The TypeScript types
 * below, the `get` field catalogue (src/format/fields.ts), the OpenAPI schemas
 * (src/http/openapi.ts) and the tests' layout are all derived from it.
 */

/** One value of the result: its JSON type, and whether it may be null (unknown). */
export interface LayoutLeaf {
  readonly leaf: "string" | "number" | "integer" | "boolean";
  readonly nullable: boolean;
  readonly enum?: readonly string[];
  readonly description?: string;
}

/** A group of the result: keys in output order. */
export interface LayoutGroup {
  readonly [key: string]: LayoutNode;
}

export type LayoutNode = LayoutLeaf | LayoutGroup;

/** True for a leaf of the layout, false for a group. */
export function isLayoutLeaf(node: LayoutNode): node is LayoutLeaf {
  return typeof (node as LayoutLeaf).leaf === "string";
}

const text = { leaf: "string", nullable: true } as const;
const nameVersion = { name: text, version: text } as const;

export const RESULT_LAYOUT = {
  ip: { leaf: "string", nullable: false, description: "The address, canonical text" },
  geoLocation: {
    continent: text,
    continentCode: text,
    country: text,
    countryCode: text,
    capital: text,
    region: text,
    regionCode: text,
    city: text,
    postal_Code: text,
    dial_code: text,
    is_in_eu: { leaf: "boolean", nullable: false, description: "false when unknown" },
    latitude: { leaf: "number", nullable: true },
    longitude: { leaf: "number", nullable: true },
    accuracy_radius: { leaf: "integer", nullable: true, description: "Kilometres" },
  },
  timezone: {
    time_zone: { ...text, description: "IANA time zone id" },
    abbr: text,
    offset: { leaf: "integer", nullable: true, description: "Seconds east of UTC" },
    is_dst: { leaf: "boolean", nullable: true },
    utc: { ...text, description: "±HH:MM" },
    current_time: { ...text, description: "ISO 8601 local time with offset" },
  },
  flag: { flag_Icon: text, flag_unicode: text },
  currency: { code: text, symbol: text, name: text, name_plural: text, hex_unicode: text },
  connection: {
    asn_number: { leaf: "integer", nullable: true },
    asn_org: text,
    isp: text,
    org: text,
    domain: text,
    connection_type: text,
  },
  userAgent: {
    browser: nameVersion,
    engine: nameVersion,
    os: nameVersion,
    device: { type: text, vendor: text, model: text },
    cpu: {
      architecture: { leaf: "string", nullable: false, description: '"Unknown" when unknown' },
    },
  },
  security: {
    isVpn: { leaf: "boolean", nullable: true },
    isTor: { leaf: "boolean", nullable: true },
    isThreat: { leaf: "string", nullable: true, enum: ["low", "medium", "high"] },
  },
} as const satisfies LayoutGroup;

/** The TypeScript type of a layout node. */
type ValueOf<N> = N extends LayoutLeaf ? LeafValue<N> | (N["nullable"] extends true ? null : never)
  : { -readonly [K in keyof N]: ValueOf<N[K]> };

type LeafValue<N extends LayoutLeaf> = N extends { enum: readonly (infer E)[] } ? E
  : N["leaf"] extends "string" ? string
  : N["leaf"] extends "boolean" ? boolean
  : number;

type Layout = typeof RESULT_LAYOUT;

/** The `data` object of one lookup. Every key is always present. */
export type LookupResult = ValueOf<Layout>;
export type GeoLocation = LookupResult["geoLocation"];
export type TimeZoneInfo = LookupResult["timezone"];
export type Flag = LookupResult["flag"];
export type Currency = LookupResult["currency"];
export type Connection = LookupResult["connection"];
export type UserAgent = LookupResult["userAgent"];
export type NameVersion = UserAgent["browser"];
/**
 * `null` = unknown (no source for that flag is installed); `false` = a loaded
 * source says no. `isThreat` is null only when no security source is installed.
 */
export type Security = LookupResult["security"];
export type ThreatLevel = NonNullable<Security["isThreat"]>;

/** A bulk item that failed, kept in place in `responseArray`. */
export interface FailedItem {
  ip: string;
  error: { status: number; message: string };
}

/** JSON-compatible value, the input of the serialisers. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
