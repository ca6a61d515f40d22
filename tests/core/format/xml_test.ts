import assert from "node:assert/strict";
import { XMLParser } from "fast-xml-parser";
import { renderError, renderSuccess } from "../../../src/core/format/render.ts";
import { escapeXmlText, renderXml, XML_DECLARATION } from "../../../src/core/format/xml.ts";
import type { Json } from "../../../src/base/types.ts";
import { asJson, HOSTILE, resultWith, sampleFailed, sampleResult, xmlSafe } from "./_sample.ts";
import { HAS_PYTHON, HAS_XMLLINT, NO_PYTHON, NO_XMLLINT, pythonXml, xmllint } from "./_tools.ts";
import { ignoredName } from "../../_skip.ts";

const parser = new XMLParser({
  ignoreDeclaration: true,
  parseTagValue: false,
  trimValues: false,
  // Numeric character references (&#13;) are decoded only with htmlEntities on.
  htmlEntities: true,
  isArray: (name: string) => name === "item",
});

/** What any XML reader sees for a value: text leaves, forbidden characters as U+FFFD. */
function xmlView(value: Json): unknown {
  if (value === null) return "";
  if (typeof value === "string") return xmlSafe(value);
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return value.length === 0 ? "" : value.map(xmlView);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, xmlView(v)]));
}

/** fast-xml-parser's reading with `{ item: [...] }` turned back into lists. */
function parseWithFxp(xml: string): unknown {
  const unwrap = (v: unknown): unknown => {
    if (v === null || typeof v !== "object") return v;
    const entries = Object.entries(v);
    if (entries.length === 1 && entries[0]![0] === "item" && Array.isArray(entries[0]![1])) {
      return (entries[0]![1] as unknown[]).map(unwrap);
    }
    return Object.fromEntries(entries.map(([k, c]) => [k, unwrap(c)]));
  };
  return unwrap(parser.parse(xml));
}

async function assertWellFormed(xml: string): Promise<void> {
  assert.ok(xml.isWellFormed(), "body has a lone surrogate");
  const run = await xmllint(xml);
  assert.equal(run.stderr, "");
  assert.equal(run.code, 0);
}

/** The documents every reader must accept, with what they must read back. */
const DOCUMENTS: { name: string; data: Json }[] = [
  { name: "a full single result", data: asJson(sampleResult()) },
  {
    name: "a bulk list with a failed item",
    data: {
      responseArray: [asJson(sampleResult()), asJson(sampleFailed()), asJson(sampleResult("::1"))],
    },
  },
  { name: "a filtered result", data: { ip: "1.1.1.1", city: null, currency: { code: "AUD" } } },
  ...HOSTILE.map((h) => ({
    name: `hostile text: ${h.name}`,
    data: {
      responseArray: [
        asJson(resultWith(h.text)),
        asJson({ ip: h.text, error: { status: 404, message: `Invalid IP address ${h.text}` } }),
      ],
    },
  })),
];

Deno.test("renderSuccess xml starts with the declaration and has response, success, data", () => {
  const { body, contentType } = renderSuccess(asJson(sampleResult()), "xml");
  assert.equal(contentType, "application/xml; charset=utf-8");
  assert.ok(
    body.startsWith(
      `${XML_DECLARATION}\n<response><success>true</success><data><ip>8.8.8.8</ip><geoLocation>`,
    ),
  );
  assert.ok(body.endsWith("</security></data></response>"));
});

Deno.test("renderSuccess xml writes null as an empty element, booleans and numbers as text", () => {
  const { body } = renderSuccess(asJson(sampleResult()), "xml");
  for (
    const fragment of [
      "<city/>",
      "<postal_Code/>",
      "<is_in_eu>false</is_in_eu>",
      "<is_dst>true</is_dst>",
      "<latitude>37.751</latitude>",
      "<longitude>-97.822</longitude>",
      "<offset>-18000</offset>",
      "<asn_number>15169</asn_number>",
      "<browser><name>Chrome</name><version>125.0.0.0</version></browser>",
      "<flag_Icon>🇺🇸</flag_Icon>",
      "<isThreat>low</isThreat>",
    ]
  ) {
    assert.ok(body.includes(fragment), fragment);
  }
});

Deno.test("renderSuccess xml writes one item per bulk entry, failed items with ip and error", () => {
  const failed = sampleFailed("1.2.3");
  const { body } = renderSuccess(
    { responseArray: [asJson(sampleResult()), asJson(failed)] },
    "xml",
  );
  assert.ok(body.includes("<data><responseArray><item><ip>8.8.8.8</ip><geoLocation>"));
  assert.ok(body.includes(
    "</item><item><ip>1.2.3</ip><error><status>404</status>" +
      "<message>Invalid IP address &quot;1.2.3&quot;: expected 4 octets</message></error></item>" +
      "</responseArray></data>",
  ));
  assert.equal(body.split("<item>").length - 1, 2);
});

Deno.test("renderXml writes an empty list as an empty element and non-finite numbers as empty", () => {
  const body = renderXml({ data: { responseArray: [], a: NaN, b: Infinity, c: -0, d: "" } });
  assert.ok(body.includes("<responseArray></responseArray><a></a><b></b><c>0</c><d></d>"), body);
});

Deno.test("renderXml refuses a key that is not an element name", () => {
  for (const key of ["#text", "?xml", "a b", "1a", "a<b", "", "@_x"]) {
    assert.throws(() => renderXml({ data: { [key]: "x" } }), /not a valid element name/, key);
  }
});

Deno.test("escapeXmlText escapes markup once and replaces characters XML 1.0 forbids", () => {
  const cases: [string, string][] = [
    ["plain", "plain"],
    ["a&b", "a&amp;b"],
    ["&amp;", "&amp;amp;"],
    ["<x>", "&lt;x&gt;"],
    [`"'`, "&quot;&apos;"],
    ["]]>", "]]&gt;"],
    ["a\r\nb", "a&#13;\nb"],
    ["\t\n", "\t\n"],
    ["\u0000\u0001\u0008\u000B\u000C\u000E\u001F", "\uFFFD".repeat(7)],
    ["\u007F\u0085", "\u007F\u0085"],
    ["\uFFFE\uFFFF\uFFFD", "\uFFFD\uFFFD\uFFFD"],
    ["\uD800", "\uFFFD"],
    ["\uDC00\uD800", "\uFFFD\uFFFD"],
    ["\uD83D\uDE00", "\uD83D\uDE00"],
    ["\uD83D\uD83D\uDE00", "\uFFFD\uD83D\uDE00"],
  ];
  for (const [input, expected] of cases) {
    assert.equal(escapeXmlText(input), expected, JSON.stringify(input));
  }
});

for (const doc of DOCUMENTS) {
  Deno.test(`renderSuccess xml of ${doc.name} reads back with fast-xml-parser`, () => {
    const { body } = renderSuccess(doc.data, "xml");
    assert.deepEqual(parseWithFxp(body), {
      response: { success: "true", data: xmlView(doc.data) },
    });
  });

  Deno.test({
    name: ignoredName(`renderSuccess xml of ${doc.name} is well-formed for xmllint`, NO_XMLLINT),
    ignore: !HAS_XMLLINT,
    fn: () => assertWellFormed(renderSuccess(doc.data, "xml").body),
  });

  Deno.test({
    name: ignoredName(
      `renderSuccess xml of ${doc.name} reads back with Python's ElementTree`,
      NO_PYTHON,
    ),
    ignore: !HAS_PYTHON,
    fn: async () => {
      const { body } = renderSuccess(doc.data, "xml");
      assert.deepEqual(await pythonXml(body), {
        response: { success: "true", data: xmlView(doc.data) },
      });
    },
  });
}

/** Every UTF-16 code unit once, in chunks, so each chunk mixes surrogates and controls. */
const EVERY_CODE_UNIT: string[] = [];
for (let start = 0; start < 0x10000; start += 0x1000) {
  EVERY_CODE_UNIT.push(
    String.fromCharCode(...Array.from({ length: 0x1000 }, (_, i) => start + i)),
  );
}
const EVERY_DOC: Json = { responseArray: EVERY_CODE_UNIT.map((t) => asJson(resultWith(t))) };

Deno.test({
  name: ignoredName(
    "renderSuccess xml is well-formed and reads back for every UTF-16 code unit",
    NO_XMLLINT ?? NO_PYTHON,
  ),
  ignore: !HAS_XMLLINT || !HAS_PYTHON,
  fn: async () => {
    const { body } = renderSuccess(EVERY_DOC, "xml");
    await assertWellFormed(body);
    const expected = { response: { success: "true", data: xmlView(EVERY_DOC) } };
    assert.deepEqual(await pythonXml(body), expected);
    assert.deepEqual(parseWithFxp(body), expected);
  },
});

Deno.test("renderError xml is a response with success false and the message", async (t) => {
  const message = `Unknown field "<b>&\u0001" in get: valid names are ip`;
  const { body, contentType } = renderError(message, "xml");
  assert.equal(contentType, "application/xml; charset=utf-8");
  assert.ok(body.startsWith(`${XML_DECLARATION}\n<response><success>false</success><message>`));
  assert.deepEqual(parseWithFxp(body), {
    response: { success: "false", message: xmlSafe(message) },
  });
  await t.step({
    name: ignoredName("and is well-formed for xmllint", NO_XMLLINT),
    ignore: !HAS_XMLLINT,
    fn: () => assertWellFormed(body),
  });
});
