/** Realistic lookup results for the format tests: every field present, some null. */

import type { FailedItem, Json, LookupResult } from "../../../src/base/types.ts";

/** A full result in layout order (US address, desktop Chrome), with a few nulls. */
export function sampleResult(ip = "8.8.8.8"): LookupResult {
  return {
    ip,
    geoLocation: {
      continent: "North America",
      continentCode: "NA",
      country: "United States",
      countryCode: "US",
      capital: "Washington D.C.",
      region: "California",
      regionCode: "CA",
      city: null,
      postal_Code: null,
      dial_code: "+1",
      is_in_eu: false,
      latitude: 37.751,
      longitude: -97.822,
      accuracy_radius: 1000,
    },
    timezone: {
      time_zone: "America/Chicago",
      abbr: "CDT",
      offset: -18000,
      is_dst: true,
      utc: "-05:00",
      current_time: "2024-06-01T07:30:00-05:00",
    },
    flag: {
      flag_Icon: "🇺🇸",
      flag_unicode: "U+1F1FA U+1F1F8",
    },
    currency: {
      code: "USD",
      symbol: "$",
      name: "US Dollar",
      name_plural: "US dollars",
      hex_unicode: "24",
    },
    connection: {
      asn_number: 15169,
      asn_org: "GOOGLE",
      isp: "GOOGLE",
      org: "GOOGLE",
      domain: null,
      connection_type: null,
    },
    userAgent: {
      browser: { name: "Chrome", version: "125.0.0.0" },
      engine: { name: "Blink", version: "125.0.0.0" },
      os: { name: "Windows", version: "10" },
      device: { type: "desktop", vendor: null, model: null },
      cpu: { architecture: "amd64" },
    },
    security: { isVpn: false, isTor: false, isThreat: "low" },
  };
}

/** A failed bulk item, as the bulk route puts it in place. */
export function sampleFailed(ip = "999.1.1.1"): FailedItem {
  return {
    ip,
    error: { status: 404, message: `Invalid IP address ${JSON.stringify(ip)}: expected 4 octets` },
  };
}

/** A result with `text` in several string fields, top level to deepest. */
export function resultWith(text: string): LookupResult {
  const r = sampleResult();
  r.geoLocation.city = text;
  r.connection.asn_org = text;
  r.userAgent.browser.name = text;
  r.userAgent.device.model = text;
  return r;
}

/** Views an interface value as the `Json` the serialisers take. */
export function asJson(value: LookupResult | FailedItem | Record<string, unknown>): Json {
  return value as unknown as Json;
}

/** Hostile strings every serialiser must survive. */
export const HOSTILE: readonly { readonly name: string; readonly text: string }[] = [
  { name: "markup and quotes", text: `<script>alert("x")&'</script>` },
  { name: "CDATA end", text: "a]]>b<![CDATA[c]]>" },
  { name: "pre-escaped entities", text: "&amp; &#60; &lt; &#x0;" },
  {
    name: "all C0 controls",
    text: Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join(""),
  },
  { name: "NUL alone", text: "\u0000" },
  { name: "lone high surrogate", text: "a\uD800b" },
  { name: "lone low surrogate", text: "\uDC00z" },
  { name: "reversed surrogate pair", text: "\uDC00\uD800" },
  { name: "trailing high surrogate", text: "end\uD83D" },
  { name: "noncharacters U+FFFE U+FFFF", text: "x\uFFFEy\uFFFFz" },
  { name: "emoji and astral", text: "🇺🇸 👍🏽 😀 𝄞 中文 Ünïcödé" },
  { name: "commas and quotes", text: `comma, "quoted", and 'single'` },
  { name: "CR, LF and CRLF", text: "line1\r\nline2\rline3\nline4\r" },
  { name: "tab and padding", text: "  a\tb  " },
  { name: "NEL and line separators", text: "a\u0085b\u2028c\u2029d" },
  { name: "formula", text: `=HYPERLINK("http://x","y")` },
  { name: "empty string", text: "" },
];

/** The text an XML reader must get back: XML-forbidden characters as U+FFFD. */
export function xmlSafe(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += text.slice(i, i + 2);
        i++;
      } else {
        out += "\uFFFD";
      }
    } else if (
      (c >= 0xdc00 && c <= 0xdfff) || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) ||
      c === 0xfffe || c === 0xffff
    ) {
      out += "\uFFFD";
    } else {
      out += text[i];
    }
  }
  return out;
}
