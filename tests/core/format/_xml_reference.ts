/**
 * The XML serialiser as it was, built with fast-xml-parser's XMLBuilder: the
 * reference the hand-written one (src/core/format/xml.ts) must match byte for byte.
 * Text escaping is shared (escapeXmlText), as it was then.
 */

import { XMLBuilder } from "fast-xml-parser";
import type { Json } from "../../../src/base/types.ts";
import { escapeXmlText, XML_DECLARATION, XML_ITEM } from "../../../src/core/format/xml.ts";

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
export function referenceXml(root: { readonly [key: string]: Json }): string {
  const tree = prepare(root as Json);
  return `${XML_DECLARATION}\n${builder.build({ response: tree })}`;
}
