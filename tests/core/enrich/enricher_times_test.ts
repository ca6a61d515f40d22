/**
 * enrich's record times, partial answers and impossible travel, on the real
 * default data (data/: GeoLite2 City and ASN, no security list, so no list
 * history: every record time lies outside it).
 */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { AppError } from "../../../src/base/errors.ts";
import { Enricher, type EnrichOptions } from "../../../src/core/enrich/enricher.ts";
import { parseFieldSelection } from "../../../src/core/format/select.ts";
import { createLookup, type Lookup } from "../../../src/core/lookup/lookup.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { addCounts } from "../../../src/process/cli/enrich_pool.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";
import { seededRandom } from "../../_random.ts";

const NOW = new Date("2026-11-28T12:00:00Z");

let opened: Lookup | null = null;
async function realLookup(): Promise<Lookup> {
  opened ??= createLookup({
    data: await openDataSet(DEFAULT_DATA_DIR),
    now: () => NOW,
    parseUserAgent: createUserAgentParser(),
  });
  return opened;
}

const BASE: EnrichOptions = {
  input: "csv",
  output: "ndjson",
  prefix: "ip_",
  into: "ipintel",
  selection: parseFieldSelection("countryCode,asn_number,isTor"),
  lang: null,
  at: null,
};

const TRAVEL = { key: "user", speedKmh: 1000, subjects: 1000 };

function enrich(enricher: Enricher, text: string): string {
  return enricher.push(text) + enricher.end();
}

Deno.test("partial answers: an unreadable time and one outside the history still answer the country; only security is left empty", async () => {
  const enricher = new Enricher(await realLookup(), { ...BASE, time: "ts" });
  const rows: string[][] = parse(enrich(
    enricher,
    "ts,ip\n" +
      "2026-10-28 00:00:00 +0000,8.8.8.8\n" + // Shopify's form: read, before the (absent) history
      "1764320000000,81.2.69.142\n" + // epoch ms, as text
      "1764320000,1.1.1.1\n" + // epoch s, as text
      "2026-02-31 00:00:00,8.8.8.8\n" + // no such day: unreadable
      ",81.2.69.142\n" + // no time
      "2027-01-01T00:00:00Z,8.8.8.8\n" + // after now
      "1764320000,not-an-ip\n" + // the address fails: the record fails
      "nonsense,10.0.0.1\n" +
      "1764320000,8.8.4.4\n", // a time already found outside the history: the same answer
  ));
  assert.deepEqual(rows[0], [
    "ts",
    "ip",
    "ip_countryCode",
    "ip_asn_number",
    "ip_isTor",
    "ip_error",
  ]);
  assert.deepEqual(rows.slice(1, 7).map((r) => r.slice(2, 5)), [
    ["US", "15169", ""],
    ["GB", "20712", ""],
    ["AU", "13335", ""],
    ["US", "15169", ""],
    ["GB", "20712", ""],
    ["US", "15169", ""],
  ]);
  for (const row of rows.slice(1, 4)) {
    assert.match(row[5]!, /^No list history is kept on this server, so at \d{4}-/, row[1]);
  }
  assert.match(rows[4]![5]!, /^Invalid time "2026-02-31 00:00:00": February 2026 has no day 31/);
  assert.equal(rows[5]![5], "No time in this record");
  assert.match(rows[6]![5]!, /^Invalid at 2027-01-01T00:00:00\.000Z: it is in the future/);
  assert.match(rows[7]![5]!, /^Invalid IP address "not-an-ip"/);
  assert.match(rows[8]![5]!, /^No data for IP address "10\.0\.0\.1"/);
  assert.deepEqual(rows[9]!.slice(2, 4), ["US", "15169"]);
  assert.equal(rows[9]![5], rows[3]![5]);
  assert.deepEqual(enricher.counts, {
    records: 9,
    enriched: 7,
    partial: { "time outside the list history": 5, "unreadable time": 1, "no time": 1 },
    failed: { "invalid address": 1, "no data": 1 },
  });
});

Deno.test("partial answers: --at before the history answers the rest; NDJSON leaves security out and says why", async () => {
  const at = new Date("2026-11-01T00:00:00Z");
  const csv = new Enricher(await realLookup(), { ...BASE, at });
  const rows: string[][] = parse(enrich(csv, "ip\n8.8.8.8\n"));
  assert.deepEqual(rows[1]!.slice(0, 4), ["8.8.8.8", "US", "15169", ""]);
  assert.match(rows[1]![4]!, /^No list history is kept on this server/);
  assert.deepEqual(csv.counts.failed, {});
  assert.equal(csv.counts.enriched, 1);

  const ndjson = new Enricher(await realLookup(), {
    ...BASE,
    input: "ndjson",
    time: "time",
    selection: null,
  });
  const lines = enrich(
    ndjson,
    '{"time":1764320000000,"ip":"8.8.8.8"}\n{"time":"soon","ip":"8.8.8.8"}\n{"time":{"a":1},"ip":"8.8.8.8"}\n',
  ).trimEnd().split("\n").map((line) => JSON.parse(line).ipintel);
  for (const answer of lines) {
    assert.equal(answer.geoLocation.countryCode, "US");
    assert.equal(answer.connection.asn_number, 15169);
    assert.equal("security" in answer, false, "security is left out, not guessed");
  }
  assert.match(lines[0].error, /^No list history is kept/);
  assert.match(lines[1].error, /^Invalid time "soon"/);
  assert.match(lines[2].error, /^Invalid time "\{\\"a\\":1\}"/);
});

Deno.test("errors are told apart by code: a bad lang is the run's error, never a record's time", async () => {
  const enricher = new Enricher(await realLookup(), { ...BASE, time: "ts", lang: "de_AT" });
  assert.throws(
    () => enrich(enricher, "ts,ip\n2026-11-01T00:00:00Z,8.8.8.8\n"),
    (error: unknown) => error instanceof AppError && error.code === "bad_request",
  );
});

/** The travel fields of CSV rows with `user`, `ts`, `ip` (and the error). */
async function travelRows(csv: string, travel = TRAVEL) {
  const enricher = new Enricher(await realLookup(), {
    ...BASE,
    selection: parseFieldSelection("countryCode"),
    time: "ts",
    travel,
  });
  const rows: string[][] = parse(enrich(enricher, csv));
  return { rows, enricher };
}

Deno.test("impossible travel on the real data: alice 8.8.8.8 then 81.2.69.142 ten minutes later is impossible", async () => {
  const { rows, enricher } = await travelRows(
    "user,ts,ip\n" +
      "alice,2026-11-20T08:00:00Z,8.8.8.8\n" +
      "alice,2026-11-20T08:10:00Z,81.2.69.142\n",
  );
  assert.deepEqual(rows[0], [
    "user",
    "ts",
    "ip",
    "ip_countryCode",
    "ip_travel_km",
    "ip_travel_kmh",
    "ip_impossible_travel",
    "ip_error",
  ]);
  assert.deepEqual(rows[1]!.slice(3, 7), ["US", "", "", ""], "a subject's first record: empty");
  const [country, km, kmh, impossible] = rows[2]!.slice(3, 7);
  assert.equal(country, "GB");
  assert.ok(Number(km) > 5000, km);
  // 7,286 km less the radii (1,000 km for 8.8.8.8, 200 for 81.2.69.142) in a sixth of an hour.
  assert.equal(km, "7286.1");
  assert.equal(kmh, String(Math.round((7286.1 - 1200) * 6)));
  assert.equal(impossible, "true");
  assert.deepEqual(enricher.travelCounts(), {
    judged: 1,
    impossible: 1,
    subjects: 1,
    forgotten: 0,
    limit: 1000,
  });
});

Deno.test("impossible travel on the real data: bob's 8.8.8.8 then 8.8.4.4 an hour later is not impossible", async () => {
  // In the GeoLite2 data, 8.8.8.8 is placed only to the United States (its centre, radius
  // 1,000 km) and 8.8.4.4 in Westfield, MA (radius 10 km): 2,183.6 km apart. A place known only
  // to its country could be anywhere in it, so beside a record in the same country it is no
  // distance at all (travel.ts).
  const { rows } = await travelRows(
    "user,ts,ip\n" +
      "bob,2026-11-20T08:00:00Z,8.8.8.8\n" +
      "bob,2026-11-20T09:00:00Z,8.8.4.4\n" +
      "carol,2026-11-20T08:00:00Z,8.8.4.4\n" +
      "carol,2026-11-20T08:01:00Z,8.8.8.8\n" +
      "dave,2026-11-20T08:00:00Z,8.8.8.8\n" +
      "dave,2026-11-20T08:00:00Z,8.8.8.8\n",
  );
  assert.deepEqual(rows[2]!.slice(4, 7), ["2183.6", "0", "false"]);
  assert.deepEqual(rows[4]!.slice(4, 7), ["2183.6", "0", "false"], "either way round");
  assert.deepEqual(rows[6]!.slice(4, 7), ["0", "0", "false"], "the same place, the same second");
});

Deno.test("travel: records without a subject, a time or coordinates are left empty with the reason; an earlier record uses the absolute difference", async () => {
  const { rows, enricher } = await travelRows(
    "user,ts,ip\n" +
      "erin,2026-11-20T08:10:00Z,81.2.69.142\n" +
      ",2026-11-20T08:00:00Z,8.8.8.8\n" + // no subject
      "erin,yesterday,8.8.8.8\n" + // no time
      "erin,2026-11-20T08:00:00Z,10.0.0.1\n" + // the address fails: its own error
      "erin,2026-11-20T08:00:00Z,2001:db8::1\n" + // reserved: no data
      "erin,2026-11-20T08:00:00Z,8.8.8.8\n", // ten minutes before erin's previous record
  );
  assert.deepEqual(rows[1]!.slice(4, 7), ["", "", ""]);
  assert.deepEqual(rows[2]!.slice(4, 7), ["", "", ""]);
  assert.match(rows[2]![7]!, /No travel: no user in this record$/);
  assert.deepEqual(rows[3]!.slice(4, 7), ["", "", ""]);
  assert.match(rows[3]![7]!, /^Invalid time "yesterday".*; No travel: no time that can be read$/);
  assert.equal(rows[3]![3], "US", "still answered");
  assert.match(rows[4]![7]!, /^No data for IP address "10\.0\.0\.1"/);
  assert.deepEqual(rows[6]!.slice(4, 7), [
    "7286.1",
    String(Math.round((7286.1 - 1200) * 6)),
    "true",
  ]);
  assert.equal(enricher.travelCounts()!.judged, 1);
});

Deno.test("travel without coordinates: an address placed only by its registered country says so", async () => {
  // In the GeoLite2 data, 1.1.1.1 has a registered country (Australia) and no location.
  const item = (await realLookup()).item!("1.1.1.1", {});
  assert.ok(!("error" in item) && item.geoLocation.latitude === null);
  const { rows, enricher } = await travelRows(
    "user,ts,ip\nfay,2026-11-20T08:00:00Z,1.1.1.1\nfay,2026-11-20T08:01:00Z,8.8.8.8\n",
  );
  assert.deepEqual(rows[1]!.slice(3, 7), ["AU", "", "", ""]);
  assert.match(rows[1]![7]!, /; No travel: no coordinates for 1\.1\.1\.1$/);
  assert.deepEqual(rows[2]!.slice(4, 7), ["", "", ""], "fay's first record with coordinates");
  assert.equal(enricher.travelCounts()!.subjects, 1);
});

Deno.test("travel in NDJSON: the fields under the answer's key, null when empty", async () => {
  const enricher = new Enricher(await realLookup(), {
    ...BASE,
    input: "ndjson",
    into: "geo",
    time: "time",
    selection: parseFieldSelection("countryCode"),
    travel: { key: "actor.name", speedKmh: 1000, subjects: 10 },
  });
  const lines = enrich(
    enricher,
    '{"time":1790000000000,"actor":{"name":"alice"},"ip":"8.8.8.8"}\n' +
      '{"time":1790000600000,"actor":{"name":"alice"},"ip":"81.2.69.142"}\n' +
      '{"time":1790000600000,"ip":"81.2.69.142"}\n',
  ).trimEnd().split("\n").map((line) => JSON.parse(line).geo);
  assert.deepEqual(Object.keys(lines[0]), [
    "ip",
    "countryCode",
    "error",
    "travel_km",
    "travel_kmh",
    "impossible_travel",
  ]);
  assert.equal(lines[0].travel_km, null);
  assert.equal(lines[1].travel_km, 7286.1);
  assert.equal(lines[1].impossible_travel, true);
  assert.equal(lines[2].impossible_travel, null);
  assert.match(lines[2].error, /No travel: no actor\.name in this record$/);
});

Deno.test("travel with workers: an engine resumed from the run's marks its records; the run's engine judges them in order, as one engine alone", async () => {
  const random = seededRandom(5);
  const lookup = await realLookup();
  const options: EnrichOptions = {
    ...BASE,
    output: "csv",
    time: "ts",
    selection: parseFieldSelection("countryCode"),
    travel: { key: "user", speedKmh: 1000, subjects: 3 },
  };
  const ips = ["8.8.8.8", "81.2.69.142", "8.8.4.4", "1.1.1.1", "bad", "2a02:ec0:1::9"];
  const rows = ["user,ts,ip\n"];
  for (let r = 0; r < 300; r++) {
    const user = ["", "u1", "u2", "u3", "u4", "u5"][r % 6 === 0 ? 0 : 1 + (r * 7) % 5];
    rows.push(`${user},${1790000000 + r * 60},${ips[(r * 5) % ips.length]}\n`);
  }
  const input = rows.join("");
  const whole = new Enricher(lookup, options);
  const expected = enrich(whole, input);
  assert.ok(whole.travelCounts()!.forgotten > 0, "the bound is reached");
  for (let round = 0; round < 10; round++) {
    const main = new Enricher(lookup, options);
    let out = main.push(rows[0]!);
    const other = new Enricher(lookup, options, main.position()!);
    const rest = input.slice(rows[0]!.length);
    for (let i = 0; i < rest.length;) {
      const size = 1 + Math.floor(random() * 400);
      for (const piece of main.cut(rest.slice(i, i + size))) {
        out += typeof piece === "string" ? main.fillTravel(other.push(piece)) : piece.written;
      }
      out += main.fillTravel(other.end());
      i += size;
    }
    out += main.end();
    assert.equal(out, expected, `round ${round}`);
    assert.deepEqual(addCounts(main.counts, other.counts), whole.counts);
    assert.deepEqual(main.travelCounts(), whole.travelCounts());
  }
});
