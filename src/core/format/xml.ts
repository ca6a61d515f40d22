/**
 * XML serialisation (decisions.md, "format"), written by hand over the JSON value.
 * It was fast-xml-parser's XMLBuilder, about two fifths of the JS time of an XML
 * answer; that one is kept in tests/core/format/_xml_reference.ts, which this must match
 * byte for byte.
 *
 * - `<?xml version="1.0" encoding="UTF-8"?>` then the root element `response`.
 * - Objects become nested elements named as their keys (keys are the layout's names,
 *   all plain ASCII XML names; any other key throws: a programming error, not input).
 * - Arrays become one `<item>` element per entry (`<responseArray><item>…</item></responseArray>`).
 * - `null` becomes an empty element `<city/>`; the empty string `<city></city>`.
 * - Booleans are `true`/`false`; numbers are their JavaScript text; non-finite numbers
 *   (which JSON would print as null) become an empty element.
 *
 * Text: every string is escaped in a single pass (`&` `<` `>` `"` `'` as entities; CR
 * as `&#13;` so that it survives the parser's line-end normalisation), so nothing is
 * escaped twice.
 * Characters that XML 1.0 does not allow at all (C0 controls other than tab, LF and
 * CR; U+FFFE; U+FFFF; lone surrogates) cannot be written even as character
 * references, so each is replaced with U+FFFD REPLACEMENT CHARACTER. The output is
 * well-formed XML 1.0 for any input string.
 */

import type { Json } from "../../base/types.ts";
import { rememberedTexts } from "../../base/shared_part.ts";

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

/**
 * Element names written: ASCII XML names without a colon (keys are the layout's
 * names; anything else is a programming error, not input).
 */
const ELEMENT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Names already checked (the layout's few dozen, and the envelope's). */
const checkedNames = new Set<string>();
const CHECKED_NAMES_LIMIT = 4096;

function checkName(key: string): void {
  if (checkedNames.has(key)) return;
  if (!ELEMENT_NAME.test(key)) {
    throw new Error(`Cannot write XML: ${JSON.stringify(key)} is not a valid element name`);
  }
  if (checkedNames.size < CHECKED_NAMES_LIMIT) checkedNames.add(key);
}

/**
 * The element written for a shared part (src/base/shared_part.ts), with the name it
 * was written under, remembered as its `xml` text: each is written once, as one
 * flat string (a body assembled from many small strings costs the runtime more
 * to send than to build).
 */
interface SharedElement {
  readonly name: string;
  readonly text: string;
}

/** Writes one element `<name>…</name>` for `value` (`<name/>` for null). */
function writeElement(name: string, value: Json, out: string[]): void {
  switch (typeof value) {
    case "string":
      out.push(`<${name}>${escapeXmlText(value)}</${name}>`);
      return;
    case "number":
      out.push(Number.isFinite(value) ? `<${name}>${value}</${name}>` : `<${name}></${name}>`);
      return;
    case "boolean":
      out.push(value ? `<${name}>true</${name}>` : `<${name}>false</${name}>`);
      return;
  }
  if (value === null) {
    out.push(`<${name}/>`);
    return;
  }
  const texts = rememberedTexts(value);
  const known = texts?.xml as SharedElement | undefined;
  if (known !== undefined && known.name === name) {
    out.push(known.text);
    return;
  }
  const own = [`<${name}>`];
  writeChildren(value, own);
  own.push(`</${name}>`);
  const text = own.join("");
  if (texts !== undefined) texts.xml = { name, text } satisfies SharedElement;
  out.push(text);
}

/** Writes the child elements of an object (one per key) or of an array (one `item` per entry). */
function writeChildren(value: Json[] | { [key: string]: Json }, out: string[]): void {
  if (Array.isArray(value)) {
    for (const entry of value) writeElement(XML_ITEM, entry, out);
  } else {
    for (const key in value) {
      checkName(key);
      writeElement(key, value[key]!, out);
    }
  }
}

/**
 * One element `<name>…</name>` as a document writes it (a streamed bulk answer
 * writes its items one by one with it).
 */
export function xmlElement(name: string, value: Json): string {
  checkName(name);
  const out: string[] = [];
  writeElement(name, value, out);
  return out.length === 1 ? out[0]! : out.join("");
}

/**
 * Serialises an object as an XML document whose root element is `response`.
 *
 * @example renderXml({ success: false, message: "Nope" })
 * // '<?xml version="1.0" encoding="UTF-8"?>\n<response><success>false</success><message>Nope</message></response>'
 */
export function renderXml(root: { readonly [key: string]: Json }): string {
  const out = [XML_DECLARATION, "\n<response>"];
  writeChildren(root as { [key: string]: Json }, out);
  out.push("</response>");
  let body = "";
  for (const piece of out) body += piece;
  return body;
}
