import assert from "node:assert/strict";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { openMmdb } from "../../../src/data/mmdb/reader.ts";
import type { AsnRecord } from "../../../src/data/mmdb/records.ts";
import { parseAsnCsv } from "../../../src/data/update/asn_csv.ts";
import { DEFAULT_REGISTRY, DEFAULT_SOURCES } from "../../../src/data/update/default_sources.ts";
import { fetchPackage } from "../../../src/data/update/npm_package.ts";
import { defaultDataFile } from "../../_helpers.ts";
import { seededRandom } from "../../_random.ts";

// The compiled data/asn.mmdb against the CSVs it was built from, fetched exactly as the
// build fetches them (pinned version, integrity-checked), on random samples.

const ROWS_PER_FAMILY = 1000;
const GAPS_PER_FAMILY = 200;
const SEED = 0x5eed_a5;

/** One CSV row with its addresses as integers; `order` is its insertion order in the build. */
interface Row {
  first: bigint;
  last: bigint;
  asn: number;
  organization: string;
  order: number;
  where: string;
}

interface Family {
  name: "IPv4" | "IPv6";
  /** Sorted by first address. */
  rows: Row[];
  /** Whether the CSV itself lists the rows by first address. */
  sortedInFile: boolean;
}

const source = DEFAULT_SOURCES.find((s) => s.kind === "asn");
assert.ok(source && source.build.type === "asn-csv", "data/sources.json has no asn-csv source");
const asnBuild = source.build;

async function loadSource(): Promise<Family[]> {
  const files = await fetchPackage(DEFAULT_REGISTRY, source!.package, () => {});
  const decoder = new TextDecoder();
  let order = 0;
  const families: Family[] = [];
  for (const member of asnBuild.members) {
    const file = files.find((f) => f.path === member);
    assert.ok(file, `${source!.package.name}@${source!.package.version} has no ${member}`);
    const text = decoder.decode(file.bytes);
    const rows: Row[] = [];
    let version: 4 | 6 | null = null;
    const count = parseAsnCsv(text, (r) => {
      version ??= parseIp(r.first).version;
      rows.push({
        first: toBigInt(r.first),
        last: toBigInt(r.last),
        asn: r.asn,
        organization: r.organization,
        order: order++,
        where: `${member} row ${rows.length + 1}`,
      });
    });
    assert.equal(count, text.split("\n").filter((l) => l.trim() !== "").length, member);
    const sortedInFile = rows.every((r, i) => i === 0 || rows[i - 1]!.first <= r.first);
    families.push({
      name: version === 4 ? "IPv4" : "IPv6",
      rows: rows.toSorted((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0)),
      sortedInFile,
    });
  }
  return families;
}

function toBigInt(text: string): bigint {
  const { bytes } = parseIp(text);
  let n = 0n;
  for (let i = 0; i < bytes.length; i++) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

function toText(n: bigint, family: Family): string {
  if (family.name === "IPv4") {
    return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join(".");
  }
  const words = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn));
  return parseIp(words.map((w) => w.toString(16)).join(":")).address;
}

/** Seeded picks: an index below n, and a uniform-enough bigint in [lo, hi]. */
function prng(seed: number) {
  const random = seededRandom(seed);
  const next = () => Math.floor(random() * 4294967296);
  return {
    index: (n: number) => next() % n,
    between: (lo: bigint, hi: bigint) => {
      let r = 0n;
      for (let i = 0; i < 5; i++) r = (r << 32n) | BigInt(next());
      return lo + (r % (hi - lo + 1n));
    },
  };
}

/** Pairs of rows that share addresses (rows sorted by first address). */
function overlaps(family: Family): [Row, Row][] {
  const found: [Row, Row][] = [];
  let widest: Row | null = null; // the row reaching furthest so far
  for (const row of family.rows) {
    if (widest && row.first <= widest.last) found.push([widest, row]);
    if (!widest || row.last > widest.last) widest = row;
  }
  return found;
}

/** The row the build leaves in charge of `ip`: the last inserted that covers it, or null. */
function owner(family: Family, extra: Row[], ip: bigint): Row | null {
  const rows = family.rows;
  let lo = 0;
  let hi = rows.length - 1;
  while (lo < hi) { // last row with first <= ip
    const mid = (lo + hi + 1) >> 1;
    if (rows[mid]!.first <= ip) lo = mid;
    else hi = mid - 1;
  }
  const candidates = [rows[lo]!, ...extra].filter((r) => r.first <= ip && ip <= r.last);
  return candidates.reduce<Row | null>((a, b) => (!a || b.order > a.order ? b : a), null);
}

const families = await loadSource();
const db = openMmdb<AsnRecord>(await Deno.readFile(defaultDataFile("asn")));
const overlapping = families.map((family) => overlaps(family).flat());

const expectedRecord = (row: Row | null) =>
  row && { autonomous_system_number: row.asn, autonomous_system_organization: row.organization };

Deno.test("the pinned ASN CSVs are an IPv4 and an IPv6 file, sorted, with few overlapping rows", () => {
  assert.deepEqual(families.map((f) => f.name), ["IPv4", "IPv6"]);
  for (const family of families) {
    assert.ok(family.rows.length > 50_000, `${family.name}: only ${family.rows.length} rows`);
    assert.ok(family.sortedInFile, `${family.name}: the CSV is not sorted by first address`);
    assert.ok(family.rows.every((r) => r.first <= r.last), `${family.name}: first > last`);
  }
  // Found when this test was written (@ip-location-db/asn@2.3.2026061719): one IPv4 pair,
  // 214.95.0.0-215.0.255.255 (AS749) and 215.0.0.0-215.1.3.255 (AS721); no IPv6 overlap.
  // The next test checks the build resolves any overlap as the later row, whatever the pin.
  const described = families.map((family) =>
    overlaps(family).map(([a, b]) =>
      `${toText(a.first, family)}-${toText(a.last, family)} AS${a.asn} / ` +
      `${toText(b.first, family)}-${toText(b.last, family)} AS${b.asn}`
    )
  );
  assert.ok(described.flat().length < 20, `many overlaps: ${described.flat().join("; ")}`);
});

Deno.test("data/asn.mmdb gives overlapping CSV rows' shared addresses to the later row", () => {
  for (const [i, family] of families.entries()) {
    for (const [a, b] of overlaps(family)) {
      const [earlier, later] = a.order < b.order ? [a, b] : [b, a];
      const sharedFirst = a.first > b.first ? a.first : b.first;
      const sharedLast = a.last < b.last ? a.last : b.last;
      const expectations: [bigint, Row][] = [[sharedFirst, later], [sharedLast, later]];
      // The earlier row keeps whatever of it the later row does not cover.
      if (earlier.first < sharedFirst) expectations.push([earlier.first, earlier]);
      if (earlier.last > sharedLast) expectations.push([earlier.last, earlier]);
      for (const [ip, row] of expectations) {
        const text = toText(ip, family);
        assert.deepEqual(db.get(text), expectedRecord(row), `${text} (${row.where})`);
        assert.equal(owner(family, overlapping[i]!, ip), row);
      }
    }
  }
});

Deno.test("data/asn.mmdb maps the first, last and a random address of 2,000 random CSV rows to the row", () => {
  const random = prng(SEED);
  const mismatches: string[] = [];
  for (const [i, family] of families.entries()) {
    for (let n = 0; n < ROWS_PER_FAMILY; n++) {
      const row = family.rows[random.index(family.rows.length)]!;
      for (const ip of [row.first, row.last, random.between(row.first, row.last)]) {
        const text = toText(ip, family);
        // Normally the row itself; inside an overlap, the later of the overlapping rows.
        const expected = expectedRecord(owner(family, overlapping[i]!, ip));
        const actual = db.get(text);
        if (JSON.stringify(actual) !== JSON.stringify(expected)) {
          mismatches.push(`${text} (${row.where}): ${JSON.stringify(actual)}`);
        }
      }
    }
  }
  assert.deepEqual(mismatches, []);
});

Deno.test("data/asn.mmdb knows nothing in the gaps between CSV rows", () => {
  const random = prng(SEED + 1);
  const mismatches: string[] = [];
  for (const [i, family] of families.entries()) {
    const gaps: [bigint, bigint][] = [];
    let reach = -1n;
    for (const row of family.rows) {
      if (reach >= 0n && row.first > reach + 1n) gaps.push([reach + 1n, row.first - 1n]);
      if (row.last > reach) reach = row.last;
    }
    assert.ok(gaps.length > GAPS_PER_FAMILY, `${family.name}: only ${gaps.length} gaps`);
    for (let n = 0; n < GAPS_PER_FAMILY; n++) {
      const [lo, hi] = gaps[random.index(gaps.length)]!;
      for (const ip of [lo, hi, random.between(lo, hi)]) {
        assert.equal(owner(family, overlapping[i]!, ip), null);
        const text = toText(ip, family);
        const actual = db.get(text);
        if (actual !== null) mismatches.push(`${text}: ${JSON.stringify(actual)}`);
      }
    }
  }
  assert.deepEqual(mismatches, []);
});
