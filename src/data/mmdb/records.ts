/** The record layouts we read: MaxMind's GeoIP2/GeoLite2 City and ASN schemas. */

export type Names = Record<string, string>;

export interface CityRecord {
  city?: { geoname_id?: number; names?: Names };
  continent?: { code?: string; geoname_id?: number; names?: Names };
  country?: { iso_code?: string; is_in_european_union?: boolean; names?: Names };
  registered_country?: { iso_code?: string; is_in_european_union?: boolean; names?: Names };
  location?: {
    accuracy_radius?: number;
    latitude?: number;
    longitude?: number;
    time_zone?: string;
  };
  postal?: { code?: string };
  subdivisions?: { iso_code?: string; names?: Names }[];
}

export interface AsnRecord {
  autonomous_system_number?: number;
  autonomous_system_organization?: string;
}

/** GeoIP2-ISP (also DB-IP ISP): the network's operator and, often, its AS. */
export interface IspRecord {
  autonomous_system_number?: number;
  autonomous_system_organization?: string;
  isp?: string;
  organization?: string;
  mobile_country_code?: string;
  mobile_network_code?: string;
}

/** GeoIP2-Domain: the second-level domain of the address's reverse name. */
export interface DomainRecord {
  domain?: string;
}

/** GeoIP2-Connection-Type: "Cable/DSL", "Cellular", "Corporate", "Satellite". */
export interface ConnectionTypeRecord {
  connection_type?: string;
}

/** GeoIP2-Anonymous-IP: each flag is present (true) only when it applies. */
export interface AnonymousIpRecord {
  is_anonymous?: boolean;
  is_anonymous_vpn?: boolean;
  is_hosting_provider?: boolean;
  is_public_proxy?: boolean;
  is_residential_proxy?: boolean;
  is_tor_exit_node?: boolean;
}

/** One list covering an address: its name, its entry, and a geofeed entry's place. */
export interface FeedMatchRecord {
  source: string;
  /** The list's entry as written: a CIDR, an address, or a range `first-last`. */
  network: string;
  country?: string;
  region?: string;
  city?: string;
  postal?: string;
}

/**
 * A piece of a compiled feed tree: every list covering it, the most specific
 * entry first. Trees compiled before matches were kept hold only `source`.
 */
export interface FeedRecord {
  matches?: FeedMatchRecord[];
  source?: string;
}
