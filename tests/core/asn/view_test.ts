import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import { XMLParser } from "fast-xml-parser";
import { ASN_LAYOUT, parseAsnSelection } from "../../../src/core/asn/layout.ts";
import { asnCost, createAsnView, RENDERED_LIMITS } from "../../../src/core/asn/view.ts";
import { AppError, STATUS_BY_CODE } from "../../../src/base/errors.ts";
import { asnDataSet } from "./_fixtures.ts";

const data = await asnDataSet();
const view = createAsnView();
const json = async (raw: string, get: string | null = null) =>
  JSON.parse((await view.answer(raw, data, parseAsnSelection(get), "json")).body);

/** The status and message an input gets. */
async function failure(raw: string): Promise<{ status: number; message: string }> {
  try {
    await view.answer(raw, data, null, "json");
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return { status: STATUS_BY_CODE[error.code], message: error.message };
  }
  assert.fail(`${raw} was answered`);
}

Deno.test("the ASN view answers an AS with its prefixes, counts and (no) lists, in layout order", async () => {
  const body = await json("100");
  assert.equal(body.success, true);
  assert.deepEqual(Object.keys(body.data), Object.keys(ASN_LAYOUT));
  assert.deepEqual(body.data, {
    asn: 100,
    name: "Example Net",
    country: null,
    prefixes: {
      ipv4: ["10.0.0.0/23"],
      ipv6: ["2001:db8::/47", "2001:db8:2::/96", "2001:db8:2::5:0:0/96"],
    },
    // A /47 is 2^17 /64s; the two /96s share one /64.
    counts: { ipv4Prefixes: 1, ipv6Prefixes: 3, ipv4Addresses: 512, ipv6Slash64s: 2 ** 17 + 1 },
    lists: [],
  });
});

Deno.test("the ASN view reads 100, AS100 and as100 alike", async () => {
  assert.deepEqual(await json("AS100"), await json("100"));
  assert.deepEqual(await json("as100"), await json("100"));
});

Deno.test("the ASN view refuses a malformed AS number with a 400 naming it", async () => {
  for (const raw of ["abc", "-1", "4294967296", "AS", "1.5", "0100", "AS 100", " 100"]) {
    const { status, message } = await failure(raw);
    assert.equal(status, 400, raw);
    assert.ok(message.includes(JSON.stringify(raw)), message);
  }
  assert.equal((await failure("")).status, 400);
});

Deno.test("the ASN view answers 404 for an AS the data lacks, and for private ones it holds", async () => {
  assert.deepEqual(await failure("300"), { status: 404, message: "No data for AS300" });
  // 192.168.0.0/16 is AS64512 in the fixture: private-use numbers are nobody's public network.
  assert.deepEqual(await failure("64512"), {
    status: 404,
    message: "No data for AS64512: it is a private-use AS number (RFC 6996)",
  });
  for (const raw of ["4200000000", "4294967294", "0", "23456"]) {
    assert.equal((await failure(raw)).status, 404);
  }
});

Deno.test("the ASN view filters with get, keeping asn first", async () => {
  assert.deepEqual(await json("100", "counts.ipv4Addresses,name"), {
    success: true,
    data: { asn: 100, name: "Example Net", counts: { ipv4Addresses: 512 } },
  });
  assert.deepEqual(await json("200", "ipv4"), {
    success: true,
    data: { asn: 200, ipv4: ["10.0.2.0/24"] },
  });
  assert.throws(
    () => parseAsnSelection("city"),
    /Unknown field "city" in get: valid names are asn/,
  );
});

Deno.test("the ASN view's CSV is one row per prefix", async () => {
  const rendered = await view.answer("100", data, null, "csv");
  assert.equal(rendered.contentType, "text/csv; charset=utf-8");
  assert.deepEqual(parseCsv(rendered.body, { columns: true }), [
    { asn: "100", name: "Example Net", country: "", version: "4", prefix: "10.0.0.0/23" },
    { asn: "100", name: "Example Net", country: "", version: "6", prefix: "2001:db8::/47" },
    { asn: "100", name: "Example Net", country: "", version: "6", prefix: "2001:db8:2::/96" },
    { asn: "100", name: "Example Net", country: "", version: "6", prefix: "2001:db8:2::5:0:0/96" },
  ]);
  // Without prefixes, the per-AS counts in one row.
  const counts = (await view.answer("100", data, parseAsnSelection("counts"), "csv")).body;
  assert.equal(
    counts,
    "asn,counts.ipv4Prefixes,counts.ipv6Prefixes,counts.ipv4Addresses,counts.ipv6Slash64s\r\n" +
      "100,1,3,512,131073\r\n",
  );
});

Deno.test("the ASN view's XML holds each prefix as an item", async () => {
  const rendered = await view.answer("200", data, null, "xml");
  assert.equal(rendered.contentType, "application/xml; charset=utf-8");
  const doc = new XMLParser({ parseTagValue: false }).parse(rendered.body);
  assert.equal(doc.response.success, "true");
  assert.equal(doc.response.data.asn, "200");
  assert.equal(doc.response.data.prefixes.ipv4.item, "10.0.2.0/24");
});

Deno.test("the ASN view follows a reload: a new data set is indexed anew", async () => {
  const before = await json("200");
  const reloaded = await asnDataSet([
    ["10.0.2.0/24", { autonomous_system_number: 200, autonomous_system_organization: "Other" }],
    ["10.9.0.0/16", { autonomous_system_number: 200, autonomous_system_organization: "Other" }],
  ]);
  const after = JSON.parse((await view.answer("200", reloaded, null, "json")).body);
  assert.deepEqual(before.data.prefixes.ipv4, ["10.0.2.0/24"]);
  assert.deepEqual(after.data.prefixes.ipv4, ["10.0.2.0/24", "10.9.0.0/16"]);
  await assert.rejects(() => view.answer("100", reloaded, null, "json"), /No data for AS100/);
});

Deno.test("questions arriving together during the build are all answered", async () => {
  const fresh = await asnDataSet();
  const own = createAsnView();
  const [a, b] = await Promise.all([own.data("100", fresh), own.data("AS200", fresh)]);
  assert.equal(a.asn, 100);
  assert.equal(b.asn, 200);
});

Deno.test("the ASN view keeps each rendered answer per data set, AS, format and selection", async () => {
  const kept = createAsnView();
  const first = await kept.answer("100", data, null, "csv");
  assert.equal(
    await kept.answer("AS100", data, null, "csv"),
    first,
    "the same answer, not rendered again",
  );
  assert.notEqual(await kept.answer("100", data, null, "json"), first);
  assert.notEqual(await kept.answer("100", data, parseAsnSelection("prefixes"), "csv"), first);
  // Another data set (a reload) renders anew.
  const reloaded = await asnDataSet();
  const fresh = await kept.answer("100", reloaded, null, "csv");
  assert.notEqual(fresh, first);
  assert.equal(fresh.body, first.body);
});

Deno.test("the ASN view's kept answers are bounded in number", async () => {
  const kept = createAsnView();
  const first = await kept.answer("100", data, null, "json");
  // More distinct answers than RENDERED_LIMITS.entries: the first is rendered again.
  const fields = ["asn", "name", "country", "prefixes", "ipv4", "ipv6", "counts", "lists"];
  let made = 0;
  for (let mask = 1; mask < 1 << fields.length && made <= RENDERED_LIMITS.entries; mask++) {
    const get = fields.filter((_, i) => mask & (1 << i)).join(",");
    for (const format of ["json", "xml"] as const) {
      await kept.answer("100", data, parseAsnSelection(get), format);
      made++;
    }
  }
  assert.ok(made > RENDERED_LIMITS.entries);
  assert.notEqual(await kept.answer("100", data, null, "json"), first);
});

Deno.test("prefixes(): what an answer lists, by the families get keeps; asnCost() 1 + 1 per 1,000", async () => {
  assert.equal(await view.prefixes("100", data, null), 4);
  assert.equal(await view.prefixes("AS100", data, parseAsnSelection("ipv4")), 1);
  assert.equal(await view.prefixes("100", data, parseAsnSelection("prefixes.ipv6")), 3);
  assert.equal(await view.prefixes("100", data, parseAsnSelection("name,counts")), 0);
  await assert.rejects(() => view.prefixes("300", data, null), /No data for AS300/);
  assert.deepEqual([0, 999, 1000, 9912].map(asnCost), [1, 1, 2, 10]);
});
