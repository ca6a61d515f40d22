/** What the compatible APIs answer: their fields and batch sizes (their routes and their OpenAPI operations read these). */

/** ip-api's fields in its output order, with the bit each has in the numeric `fields`. */
export const IPAPI_FIELDS: readonly (readonly [string, number])[] = [
  ["status", 16384],
  ["message", 32768],
  ["continent", 1048576],
  ["continentCode", 2097152],
  ["country", 1],
  ["countryCode", 2],
  ["region", 4],
  ["regionName", 8],
  ["city", 16],
  ["district", 524288],
  ["zip", 32],
  ["lat", 64],
  ["lon", 128],
  ["timezone", 256],
  ["offset", 33554432],
  ["currency", 8388608],
  ["isp", 512],
  ["org", 1024],
  ["as", 2048],
  ["asname", 4194304],
  ["reverse", 4096],
  ["mobile", 65536],
  ["proxy", 131072],
  ["hosting", 16777216],
  ["query", 8192],
];

/** Most queries in one `POST /batch`, as ip-api allows. */
export const IPAPI_BATCH_MAX = 100;

/** The fields `/{ip}/{field}` answers (ipinfo's names that ipintel fills). */
export const IPINFO_FIELDS = [
  "ip",
  "city",
  "region",
  "country",
  "loc",
  "org",
  "postal",
  "timezone",
  "asn",
  "privacy",
  "bogon",
] as const;
