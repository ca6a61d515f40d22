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

const FIELD_SET: ReadonlySet<string> = new Set(IPINFO_FIELDS);

/** ipinfo's body for one address: unknown values are left out, as ipinfo leaves them out. */
export function ipinfoBody(lookup: Lookup, ipText: string): Record<string, Json> {
  let detail;
  try {
    detail = lookup.detail(ipText);
  } catch (error) {
    if (error instanceof NotFoundError) {
      // A reserved range is a bogon (ipinfo's answer); another address without data: just `ip`.
      return error.rangeName ? { ip: error.ip, bogon: true } : { ip: error.ip };
    }
    throw error;
  }
  const { result, signals } = detail;
  const g = result.geoLocation;
  const c = result.connection;
  const body: Record<string, Json> = { ip: result.ip };
  const put = (key: string, value: Json | undefined) => {
    if (value !== null && value !== undefined) body[key] = value;
  };
  put("city", g.city);
  put("region", g.region);
  put("country", g.countryCode);
  put("loc", g.latitude !== null && g.longitude !== null ? `${g.latitude},${g.longitude}` : null);
  put("org", c.asn_number !== null ? `AS${c.asn_number}${c.asn_org ? ` ${c.asn_org}` : ""}` : null);
  put("postal", g.postal_Code);
  put("timezone", result.timezone.time_zone);
  if (c.asn_number !== null) {
    const asn: Record<string, Json> = { asn: `AS${c.asn_number}` };
    if (c.asn_org) asn.name = c.asn_org;
    if (c.domain) asn.domain = c.domain;
    asn.route = detail.network;
    body.asn = asn;
  }
  // Only when some security source is installed: without one, nothing is known.
  if (Object.values(signals).some((value) => value !== null)) {
    const flags = anonymizerFlags(signals);
    body.privacy = {
      vpn: flags.vpn,
      proxy: false,
      tor: flags.tor,
      relay: flags.relay,
      hosting: flags.hosting,
      service: "",
    };
  }
  if (reservedRangeName(parseIp(result.ip))) body.bogon = true;
  return body;
}

/** ipinfo's error body: `{status, error: {title, message}}`. */
export function ipinfoError(error: AppError | null): VendorAnswer {
  const answer = (
    status: number,
    title: string,
    message: string,
    headers?: Record<string, string>,
  ) => ({
    status,
    contentType: JSON_TYPE,
    body: JSON.stringify({ status, error: { title, message } }),
    headers,
  });
  if (error === null) return answer(500, "Internal error", "Internal server error");
  switch (error.code) {
    case "invalid_ip":
      return answer(404, "Wrong ip", error.message);
    case "unauthorized":
      return answer(
        403,
        "Unknown token",
        "Invalid or missing token: send the ipintel API key as ?token= or Authorization: Bearer",
      );
    case "rate_limited":
      return answer(429, "Rate limit exceeded", error.message, {
        "retry-after": String((error as RateLimitedError).retryAfterSeconds),
      });
    case "data_unavailable":
      return answer(503, "Service unavailable", error.message);
    case "payload_too_large":
      return answer(413, "Request too large", error.message);
    case "unsupported_media_type":
      return answer(415, "Unsupported media type", error.message);
    default:
      return answer(400, "Bad request", error.message);
  }
}

/** The key an ipinfo client sends. */
function keyOf(c: AppContext): string | null {
  const headers = c.req.raw.headers;
  return c.req.query("token") ?? bearerToken(headers.get("authorization")) ??
    (basicCredentials(headers)?.user || null) ?? ownKeyHeader(headers) ??
    c.req.query("apiKey") ?? null;
}

/** Charges `cost` to the authenticated caller; the lookup to answer with. */
async function admit(tools: RouteTools, c: AppContext, cost: number) {
  await charge(tools, c, cost);
  return tools.served(c).lookup;
}

/** One path's answer value: the body, or one field of it (undefined: the field is unknown). */
function answerPath(lookup: Lookup, ip: string, field: string | null): Json | undefined {
  if (field !== null && field !== "json" && !FIELD_SET.has(field)) {
    throw new BadRequestError(
      `Unknown field ${quoteInput(field)}: ipintel answers ${IPINFO_FIELDS.join(", ")} or json`,
    );
  }
  const body = ipinfoBody(lookup, ip);
  return field === null || field === "json" ? body : body[field];
