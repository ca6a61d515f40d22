/**
 * XML serialisation (decisions.md, "format"), built with fast-xml-parser's XMLBuilder.
 *
 * - `<?xml version="1.0" encoding="UTF-8"?>` then the root element `response`.
 * - Objects become nested elements named as their keys (keys are the layout's names,
 *   all plain ASCII XML names; any other key throws: a programming error, not input).
 * - Arrays become one `<item>` element per entry (`<responseArray><item>…</item></responseArray>`).
 * - `null` becomes an empty element `<city/>`; the empty string `<city></city>`.
 * - Booleans are `true`/`false`; numbers are their JavaScript text; non-finite numbers
 *   (which JSON would print as null) become an empty element.
 *
 * Text: the builder's own entity processing is turned off and every string is escaped
 * here in a single pass (`&` `<` `>` `"` `'` as entities; CR as `&#13;` so that it
 * survives the parser's line-end normalisation), so nothing is escaped twice.
 * Characters that XML 1.0 does not allow at all (C0 controls other than tab, LF and
 * CR; U+FFFE; U+FFFF; lone surrogates) cannot be written even as character
 * references, so each is replaced with U+FFFD REPLACEMENT CHARACTER. The output is
 * well-formed XML 1.0 for any input string.
 */

import { XMLBuilder } from "fast-xml-parser";
import type { Json } from "../types.ts";

/** The XML declaration that opens every document. */
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Element name of each entry of an array. */
export const XML_ITEM = "item";

/**
 * Characters that need an entity (`&<>"'` and CR), or a replacement (C0 controls
 * except tab/LF/CR, U+FFFE, U+FFFF, a high surrogate not followed by a low one, a
 * low surrogate not preceded by a high one), in XML 1.0 text.
 */
const NEEDS_WORK = new RegExp(
  "[&<>\"'\\r\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF]" +
    "|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]",
  "g",
);

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\r": "&#13;",
};

function replaceOne(ch: string): string {
  return ENTITIES[ch] ?? "\uFFFD";
}

/**
 * Escapes a string for XML 1.0 character data; characters XML cannot hold become U+FFFD.
 *
 * @example escapeXmlText("a<b\u0000") // "a&lt;b\uFFFD"
 */
export function escapeXmlText(text: string): string {
  return text.replace(NEEDS_WORK, replaceOne);
}

/** Turns one primitive into element text (the builder calls this for every text value). */
function textOf(_name: string, value: unknown): string {
  switch (typeof value) {
    case "string":
      return escapeXmlText(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "";
    case "boolean":
      return value ? "true" : "false";
    default:
      return "";
  }
}

/**
 * Element names written: ASCII XML names without a colon. This also keeps out the
 * builder's special keys (`#text`, `?xml`, `@_…`).
 */
const ELEMENT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const builder = new XMLBuilder({
  ignoreAttributes: true,
  processEntities: false,
  tagValueProcessor: textOf,
  suppressEmptyNode: false,
  format: false,
});

type XmlTree = null | boolean | number | string | XmlTree[] | { [key: string]: XmlTree };

/**
 * Checks every key is an element name, and rewrites every array as `{ item: [...] }`
 * (returning the same object when there is no array below it).
 */
function prepare(value: Json): XmlTree {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return { [XML_ITEM]: value.map(prepare) };
  let copy: { [key: string]: XmlTree } | null = null;
  for (const key in value) {
    if (!ELEMENT_NAME.test(key)) {
      throw new Error(`Cannot write XML: ${JSON.stringify(key)} is not a valid element name`);
    }
    const child = value[key]!;
    const wrapped = prepare(child);
    if (wrapped !== child && copy === null) copy = { ...value };
    if (copy !== null) copy[key] = wrapped;
  }
  return copy ?? value;
}

/**
 * Serialises an object as an XML document whose root element is `response`.
 *
 * @example renderXml({ success: false, message: "Nope" })
 * // '<?xml version="1.0" encoding="UTF-8"?>\n<response><success>false</success><message>Nope</message></response>'
 */
export function renderXml(root: { readonly [key: string]: Json }): string {
  const tree = prepare(root as Json);
  return `${XML_DECLARATION}\n${builder.build({ response: tree })}`;
}
