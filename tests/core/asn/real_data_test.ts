/** The ASN view on the real default data in data/ (built by `deno task data`). */

import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { parseAsnSelection } from "../../../src/core/asn/layout.ts";
import { asnCost, createAsnView } from "../../../src/core/asn/view.ts";
import { AppError, STATUS_BY_CODE } from "../../../src/base/errors.ts";
import { cidrContains, parseCidr } from "../../../src/base/ip/cidr.ts";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

const data = await openDataSet(DEFAULT_DATA_DIR);
const view = createAsnView();
const answer = async (raw: string) =>
  JSON.parse((await view.answer(raw, data, null, "json")).body).data;

Deno.test("real data: AS15169 is Google's, with a v4 prefix holding 8.8.8.8 and v6 prefixes", async () => {
  const google = await answer("15169");
  assert.equal(google.asn, 15169);
  assert.match(google.name, /Google/);
  const eight = parseIp("8.8.8.8");
  assert.ok(google.prefixes.ipv4.some((p: string) => cidrContains(parseCidr(p), eight)));
  assert.ok(google.prefixes.ipv6.length > 0);
  assert.ok(google.prefixes.ipv6.every((p: string) => parseCidr(p).version === 6));
  assert.equal(google.counts.ipv4Prefixes, google.prefixes.ipv4.length);
  // Every prefix counted once: the addresses are the sum of the blocks.
  const sum = google.prefixes.ipv4.reduce(
    (n: number, p: string) => n + 2 ** (32 - parseCidr(p).prefix),
    0,
  );
  assert.equal(google.counts.ipv4Addresses, sum);
  assert.ok(sum >= 256);
  // The index and a lookup agree: 8.8.8.8's prefix is AS15169's in the ASN database.
  assert.equal(data.asn!.get("8.8.8.8")?.autonomous_system_number, 15169);
});

Deno.test("real data: AS15169 and as15169 give the prefixes 15169 does", async () => {
  const plain = await answer("15169");
  assert.deepEqual(await answer("AS15169"), plain);
  assert.deepEqual((await answer("as15169")).prefixes, plain.prefixes);
});

Deno.test("real data: ?format=csv lists AS15169's prefixes, one a row", async () => {
  const csv = (await view.answer("AS15169", data, null, "csv")).body;
  const rows: Record<string, string>[] = parseCsv(csv, { columns: true });
  const google = await answer("15169");
  assert.deepEqual(
    rows.map((r) => r.prefix),
    [...google.prefixes.ipv4, ...google.prefixes.ipv6],
  );
  assert.ok(rows.every((r) => r.asn === "15169" && /Google/.test(r.name!)));
});

Deno.test("real data: malformed numbers are 4xx, private AS64512 a 404", async () => {
  const status = async (raw: string) => {
    try {
      await view.answer(raw, data, parseAsnSelection("name"), "json");
      return 200;
    } catch (error) {
      assert.ok(error instanceof AppError);
      return STATUS_BY_CODE[error.code];
    }
  };
  assert.deepEqual(
    await Promise.all(["abc", "-1", "4294967296", "64512"].map(status)),
    [400, 400, 400, 404],
  );
});

Deno.test("real data: docs/asn.md's 404 example is one (AS1000000, unallocated), and AS300 is answered", async () => {
  await assert.rejects(() => view.answer("1000000", data, null, "json"), (error: unknown) => {
    assert.ok(error instanceof AppError);
    assert.equal(STATUS_BY_CODE[error.code], 404);
    assert.equal(error.message, "No data for AS1000000");
    return true;
  });
  const doc = await Deno.readTextFile(new URL("../../../docs/asn.md", import.meta.url));
  assert.match(doc, /is a 404 \(`No data for AS1000000`\)/);
  assert.equal((await answer("300")).asn, 300);
});

Deno.test("real data: AS4134's answer costs 1 + 1 per 1,000 prefixes, and is rendered once", async () => {
  const all = await view.prefixes("4134", data, null);
  assert.ok(all > 5000, `${all} prefixes`);
  assert.equal(asnCost(all), 1 + Math.floor(all / 1000));
  assert.equal(await view.prefixes("4134", data, parseAsnSelection("counts")), 0);
  const first = await view.answer("4134", data, null, "csv");
  const started = performance.now();
  assert.equal(await view.answer("4134", data, null, "csv"), first);
  assert.ok(performance.now() - started < 5, "kept, not rendered again");
});
