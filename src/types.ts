/** The shapes of a lookup result: spec section 2.2, with decisions.md's names. */

export interface GeoLocation {
  continent: string | null;
  continentCode: string | null;
  country: string | null;
  countryCode: string | null;
  capital: string | null;
  region: string | null;
  regionCode: string | null;
  city: string | null;
  postal_Code: string | null;
  dial_code: string | null;
  is_in_eu: boolean;
  latitude: number | null;
  longitude: number | null;
  accuracy_radius: number | null;
}

export interface TimeZoneInfo {
  time_zone: string | null;
  abbr: string | null;
  offset: number | null;
  is_dst: boolean | null;
  utc: string | null;
  current_time: string | null;
}

export interface Flag {
  flag_Icon: string | null;
  flag_unicode: string | null;
}

export interface Currency {
  code: string | null;
  symbol: string | null;
  name: string | null;
  name_plural: string | null;
  hex_unicode: string | null;
}

export interface Connection {
  asn_number: number | null;
  asn_org: string | null;
  isp: string | null;
  org: string | null;
  domain: string | null;
  connection_type: string | null;
}

export interface NameVersion {
  name: string | null;
  version: string | null;
}

export interface UserAgent {
  browser: NameVersion;
  engine: NameVersion;
  os: NameVersion;
  device: { type: string | null; vendor: string | null; model: string | null };
  cpu: { architecture: string };
}

export type ThreatLevel = "low" | "medium" | "high";

/**
 * `null` = unknown (no source for that flag is installed); `false` = a loaded
 * source says no. `isThreat` is null only when no security source is installed.
 */
export interface Security {
  isVpn: boolean | null;
  isTor: boolean | null;
  isThreat: ThreatLevel | null;
}

/** The `data` object of one lookup. Every key is always present. */
export interface LookupResult {
  ip: string;
  geoLocation: GeoLocation;
  timezone: TimeZoneInfo;
  flag: Flag;
  currency: Currency;
  connection: Connection;
  userAgent: UserAgent;
  security: Security;
}

/** A bulk item that failed, kept in place in `responseArray`. */
export interface FailedItem {
  ip: string;
  error: { status: number; message: string };
}

/** JSON-compatible value, the input of the serialisers. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
