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
