/**
 * Rendering one lookup result per format: the JSON envelope (result_json.ts),
 * XML and CSV (renderSuccess), and the library-built references the tests
 * hold them against (tests/core/format/_xml_reference.ts; _csv_reference.ts, which
 * quotes with csv-stringify), on the same results. One group, JSON as the baseline.
 *
 * Run: `deno bench --allow-read --allow-write --allow-env bench/format_bench.ts` (the
 * fixture data is written to a temporary directory).
 *
 * The results come from the test fixtures' lookup (London with a desktop
 * Chrome user agent, Berlin over IPv6, an ASN-only and a registered-country
 * address), so their shared parts are frozen and remembered as in the server.
 *
 * @module
 */

import { renderSuccess } from "../src/core/format/render.ts";
import { resultEnvelopeJson } from "../src/core/format/result_json.ts";
import type { Json, LookupResult } from "../src/base/types.ts";
import { CHROME, fixtureLookup } from "../tests/_helpers.ts";
import { referenceCsv } from "../tests/core/format/_csv_reference.ts";
import { referenceXml } from "../tests/core/format/_xml_reference.ts";

const lookup = await fixtureLookup();
const RESULTS: LookupResult[] = [
  lookup.find("81.2.69.142", { userAgent: CHROME }),
  lookup.find("2a02:ec0::1", { userAgent: CHROME }),
  lookup.find("9.9.9.9", { userAgent: CHROME }),
  lookup.find("1.1.1.1", { userAgent: CHROME }),
];
const DATA = RESULTS.map((r) => r as unknown as Json);

let sink = 0;

Deno.bench("json envelope", { group: "format", baseline: true }, () => {
  for (const r of RESULTS) sink += resultEnvelopeJson(r).length;
});
Deno.bench("xml", { group: "format" }, () => {
  for (const d of DATA) sink += renderSuccess(d, "xml").body.length;
});
Deno.bench("csv", { group: "format" }, () => {
  for (const d of DATA) sink += renderSuccess(d, "csv").body.length;
});
Deno.bench("xml, fast-xml-parser XMLBuilder (before)", { group: "format" }, () => {
  for (const d of DATA) sink += referenceXml({ success: true, data: d }).length;
});
Deno.bench("csv, the csv-stringify reference", { group: "format" }, () => {
  for (const d of DATA) sink += referenceCsv(d).length;
});

addEventListener("unload", () => {
  if (sink < 0) console.log(sink);
});
