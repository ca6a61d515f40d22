/** ASN data sets for the ASN view's tests, written by the project's own MMDB writer. */

import { type MmdbValue, MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import { type DataSet, openDataSet } from "../../../src/data/sources/data_set.ts";
import { writeManifest } from "../../../src/data/sources/manifest.ts";

const as = (n: number, org: string) => ({
  autonomous_system_number: n,
  autonomous_system_organization: org,
});

/**
 * AS 100 holds two halves of 10.0.0.0/24 under two spellings of its name (two
 * records: collapsed into one block), 10.0.1.0/24, two sibling /48s and a /96
 * inside one /64; AS 200 one IPv4 block; AS 64512 (private use) one too.
 */
export const ASN_RANGES: [string, { [key: string]: MmdbValue }][] = [
  ["10.0.0.0/25", as(100, "Example Net")],
  ["10.0.0.128/25", as(100, "Example Net, Inc.")],
  ["10.0.1.0/24", as(100, "Example Net")],
  ["10.0.2.0/24", as(200, "Other Org")],
  ["2001:db8::/48", as(100, "Example Net")],
  ["2001:db8:1::/48", as(100, "Example Net")],
  ["2001:db8:2::/96", as(100, "Example Net")],
  ["2001:db8:2::5:0:0/96", as(100, "Example Net")],
  ["192.168.0.0/16", as(64512, "Private")],
];

/** An ASN database's bytes from `ranges` (network → record). */
export function asnDatabase(
  ranges: [string, { [key: string]: MmdbValue }][] = ASN_RANGES,
): Uint8Array {
  const writer = new MmdbWriter({ databaseType: "GeoLite2-ASN" });
  for (const [network, record] of ranges) writer.insertNetwork(network, record);
  return writer.toBytes();
}

/** A data set holding only an ASN database built from `ranges`. */
export async function asnDataSet(
  ranges: [string, { [key: string]: MmdbValue }][] = ASN_RANGES,
): Promise<DataSet> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-asn-" });
  try {
    await Deno.writeFile(`${dir}/asn.mmdb`, asnDatabase(ranges));
    await writeManifest(dir, {
      sources: [{
        name: "fixture-asn",
        kind: "asn",
        file: "asn.mmdb",
        sha256: "",
        source: "test fixture",
        license: "test",
        attribution: "test",
        built: "2026-07-01T12:00:00.000Z",
        databaseType: "GeoLite2-ASN",
      }],
    });
    return await openDataSet(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
