/**
 * The shape of a lookup result, defined once: spec section 2.2 with
 * docs/decisions.md's names ("Names the spec garbles", "Layout").
 *
 * `RESULT_LAYOUT` is the one definition: its key order is the output order, and
 * each leaf says its JSON type and whether it can be null. The TypeScript types
 * below, the `get` field catalogue (src/core/format/fields.ts), the OpenAPI schemas
 * (src/service/http/openapi.ts) and the tests' layout are all derived from it.
 */

/** One value of the result: its JSON type, and whether it may be null (unknown). */
export interface LayoutLeaf {
  readonly leaf: "string" | "number" | "integer" | "boolean" | "array" | "object";
  readonly nullable: boolean;
  readonly enum?: readonly string[];
  readonly description?: string;
  /** `array` leaves: the layout of each entry (selected only as a whole). */
  readonly items?: LayoutGroup;
  /** `object` leaves (an object or null): its keys (selected only as a whole). */
  readonly fields?: LayoutGroup;
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

/**
 * The `risk` group: the detail behind `security`, returned only when `get` names
 * it (or one of its fields), so the spec's default answer is unchanged.
 */
export const RISK_LAYOUT = {
  anonymizer: {
    leaf: "string",
    nullable: true,
    enum: ["tor", "vpn", "proxy", "relay", "hosting"],
    description: "The anonymizer axis: what hides the user behind this address; null when none",
  },
  abuse: {
    leaf: "string",
    nullable: true,
    enum: ["listed"],
    description: "The abuse axis: `listed` when a threat list names the address",
  },
  provider: { ...text, description: "The hosting or relay provider, as the sources file names it" },
  crawler: {
    leaf: "object",
    nullable: true,
    description:
      "A known crawler: verified when the address is in a range its operator publishes (whatever the user agent says); not verified when the request's user agent claims it from outside its operator's ranges (a fake); null otherwise, and when no crawler source is installed",
    fields: {
      name: { leaf: "string", nullable: false, description: "The crawler, e.g. Googlebot" },
      operator: { leaf: "string", nullable: false, description: "Who runs it, e.g. Google" },
      verified: {
        leaf: "boolean",
        nullable: false,
        description: "true: in its operator's published ranges; false: a fake",
      },
    },
  },
  matches: {
    leaf: "array",
    nullable: false,
    description:
      "Every installed source listing the address: by kind (tor, vpn, hosting, threat, relay, allow, crawler, anonymous-ip), the most specific entry first within a kind",
    items: {
      source: { leaf: "string", nullable: false, description: "Its name in the sources file" },
      kind: { leaf: "string", nullable: false },
      network: { ...text, description: "The entry that matched (CIDR, address or range)" },
      dataDate: { ...text, description: "The list's own date (ISO 8601)" },
      firstSeen: {
        ...text,
        description:
          "The first update (ISO 8601) that found this entry on this list, within the kept history; null when none is kept",
      },
      lastSeen: {
        ...text,
        description:
          "The last update (ISO 8601) that found this entry on this list: the latest update while it is still listed",
      },
    },
  },
  reason: {
    leaf: "string",
    nullable: false,
    description: "Why isThreat is what it is, in one line",
  },
  asOf: {
    ...text,
    description:
      "The past time (ISO 8601) the lists are answered for (the at parameter); null: the current lists",
  },
} as const satisfies LayoutGroup;

/**
 * The opt-in `network`: the network each source that answered matched, returned
 * only when `get` names it, so the spec's default answer is unchanged.
 */
export const NETWORK_LAYOUT = {
  leaf: "array",
  nullable: false,
  description:
    "Each source that answered for the address, with the network it matched: the databases (city, asn, isp, connection-type, domain), the operator's geofeed (location), then the security lists as `risk.matches` gives them",
  items: {
    source: { leaf: "string", nullable: false, description: "Its name in the sources file" },
    kind: { leaf: "string", nullable: false },
    network: {
      ...text,
      description:
        "A database's matched network (CIDR); a list's entry as written (CIDR, address, range or AS)",
    },
  },
} as const satisfies LayoutLeaf;

/** Every group `get` can name: the result's, then the opt-in ones. */
export const SELECTABLE_LAYOUT = {
  ...RESULT_LAYOUT,
  risk: RISK_LAYOUT,
  network: NETWORK_LAYOUT,
} as const;

/** The TypeScript type of a layout node. */
type ValueOf<N> = N extends LayoutLeaf ? LeafValue<N> | (N["nullable"] extends true ? null : never)
  : { -readonly [K in keyof N]: ValueOf<N[K]> };

type LeafValue<N extends LayoutLeaf> = N extends { enum: readonly (infer E)[] } ? E
  : N extends { items: infer G } ? ValueOf<G>[]
  : N extends { fields: infer G } ? ValueOf<G>
  : N["leaf"] extends "string" ? string
  : N["leaf"] extends "boolean" ? boolean
  : number;

type Layout = typeof RESULT_LAYOUT;

/** The opt-in `risk` group. */
export type Risk = ValueOf<typeof RISK_LAYOUT>;
export type RiskMatch = Risk["matches"][number];

/** One source's matched network (the opt-in `network`). */
export type MatchedNetwork = ValueOf<typeof NETWORK_LAYOUT>[number];

/** The `data` object of one lookup. Every key is always present; `risk` and `network` only when asked for. */
export type LookupResult = ValueOf<Layout> & { risk?: Risk; network?: MatchedNetwork[] };
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

/** One item of a bulk answer: a result, or the failure in place. */
export type BulkItem = LookupResult | FailedItem;

/** Why a stream ended before its input did; written as the stream's final record. */
export interface BulkStop {
  status: number;
  message: string;
  /** Items answered before the stop (failed items included): resume from the next one. */
  answered: number;
  /** Seconds until the budget allows more (a 429 stop), else null. */
  retryAfter: number | null;
}
