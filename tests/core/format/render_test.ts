import assert from "node:assert/strict";
import {
  CONTENT_TYPES,
  type OutputFormat,
  parseFormat,
  renderError,
  renderSuccess,
} from "../../../src/core/format/render.ts";
import { applySelection, parseFieldSelection } from "../../../src/core/format/select.ts";
import { resultEnvelopeJson } from "../../../src/core/format/result_json.ts";
import { isSharedPart, sharedPart } from "../../../src/base/shared_part.ts";
import type { Json, LookupResult } from "../../../src/base/types.ts";
import { asJson, HOSTILE, resultWith, sampleFailed, sampleResult } from "./_sample.ts";

Deno.test("parseFormat reads json, xml, csv case-insensitively and defaults to json", () => {
  const cases: [string | undefined | null, OutputFormat][] = [
    [undefined, "json"],
    [null, "json"],
    ["", "json"],
    ["json", "json"],
    ["JSON", "json"],
    ["Json", "json"],
    ["xml", "xml"],
    ["XML", "xml"],
    ["xMl", "xml"],
    [" xml ", "xml"],
    ["csv", "csv"],
    ["CSV", "csv"],
    ["yaml", "json"],
    ["xmlx", "json"],
    ["x ml", "json"],
    ["text/csv", "json"],
  ];
  for (const [input, expected] of cases) assert.equal(parseFormat(input), expected, String(input));
});

Deno.test("CONTENT_TYPES are the documented media types with charset utf-8", () => {
  assert.deepEqual(CONTENT_TYPES, {
    json: "application/json; charset=utf-8",
    xml: "application/xml; charset=utf-8",
    csv: "text/csv; charset=utf-8",
  });
});

Deno.test("renderSuccess json wraps data in { success: true, data } without pretty printing", () => {
  const data = asJson(sampleResult());
  const { body, contentType } = renderSuccess(data, "json");
  assert.equal(contentType, "application/json; charset=utf-8");
  // The same JSON text, with non-ASCII characters written as \uXXXX escapes (an ASCII body).
  assert.equal(JSON.stringify(JSON.parse(body)), JSON.stringify({ success: true, data }));
  assert.ok(/^[\x20-\x7e]*$/.test(body), "body is printable ASCII");
  assert.ok(body.startsWith('{"success":true,"data":{"ip":"8.8.8.8","geoLocation":{'));
  assert.ok(!body.includes("\n"));
  assert.deepEqual(JSON.parse(body), { success: true, data: sampleResult() });
});

Deno.test("renderSuccess json keeps nulls, numbers and booleans typed", () => {
  const parsed = JSON.parse(renderSuccess(asJson(sampleResult()), "json").body);
  assert.equal(parsed.data.geoLocation.city, null);
  assert.equal(parsed.data.geoLocation.latitude, 37.751);
  assert.equal(parsed.data.geoLocation.is_in_eu, false);
  assert.equal(parsed.data.connection.asn_number, 15169);
});

Deno.test("renderSuccess json of bulk keeps items, failed ones included, in order", () => {
  const items = [sampleResult("1.1.1.1"), sampleFailed("nope"), sampleResult("1.1.1.1")];
  const data: Json = { responseArray: items.map(asJson) };
  const parsed = JSON.parse(renderSuccess(data, "json").body);
  assert.deepEqual(parsed, { success: true, data: { responseArray: items } });
});

Deno.test("renderSuccess json of a filtered result keeps the selection's key order", () => {
  const data = applySelection(sampleResult(), parseFieldSelection("security,code,city"));
  assert.equal(
    renderSuccess(data, "json").body,
    '{"success":true,"data":{"ip":"8.8.8.8","city":null,"code":"USD",' +
      '"security":{"isVpn":false,"isTor":false,"isThreat":"low"}}}',
  );
});

for (const h of HOSTILE) {
  Deno.test(`renderSuccess json round-trips hostile text exactly: ${h.name}`, () => {
    const { body } = renderSuccess(asJson(resultWith(h.text)), "json");
    assert.ok(body.isWellFormed());
    assert.deepEqual(JSON.parse(body).data, resultWith(h.text));
  });
}

Deno.test("renderError gives { success: false, message } as JSON for json and csv", () => {
  const message = 'Invalid IP address "1.2.3": expected 4 octets';
  for (const format of ["json", "csv"] as const) {
    const { body, contentType } = renderError(message, format);
    assert.equal(contentType, "application/json; charset=utf-8", format);
    assert.equal(body, JSON.stringify({ success: false, message }));
    assert.deepEqual(JSON.parse(body), { success: false, message });
  }
});

Deno.test("renderError gives an XML response for xml", () => {
  const { body, contentType } = renderError("Rate limit exceeded: retry in 3 s", "xml");
  assert.equal(contentType, "application/xml; charset=utf-8");
  assert.equal(
    body,
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
      "<response><success>false</success><message>Rate limit exceeded: retry in 3 s</message></response>",
  );
});

Deno.test("renderSuccess csv has no envelope: header row then the data row", () => {
  const { body } = renderSuccess({ ip: "1.1.1.1", city: "Sydney" }, "csv");
  assert.equal(body, "ip,city\r\n1.1.1.1,Sydney\r\n");
});

Deno.test("shared parts: a frozen object not made by sharedPart() is written anew each time", () => {
  const browser = { name: "first", version: null };
  const userAgent = Object.freeze({ ...sampleResult().userAgent, browser }); // frozen one level
  const result = { ...sampleResult(), userAgent } as LookupResult;
  const bodies = () => [
    resultEnvelopeJson(result),
    renderSuccess(result as unknown as Json, "xml").body,
    renderSuccess(result as unknown as Json, "csv").body,
  ];
  bodies();
  browser.name = "second";
  for (const body of bodies()) assert.ok(body.includes("second") && !body.includes("first"), body);
});

Deno.test("sharedPart() freezes the whole tree", () => {
  const part = sharedPart({ deep: { inner: [1, { x: 2 }] } });
  assert.ok(Object.isFrozen(part.deep) && Object.isFrozen(part.deep.inner[1]));
  assert.ok(isSharedPart(part) && !isSharedPart(part.deep) && !isSharedPart(Object.freeze({})));
});
