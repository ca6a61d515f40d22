/**
 * Where a top-level key's value lies in the text of a JSON object, so enrich
 * can replace it in place and keep the rest of the line byte for byte.
 */

/**
 * The span `[from, to)` of the value of `key` at the top level of `text`, a
 * JSON object that parses; of its last occurrence (the one `JSON.parse` keeps).
 * Null when the object has no such key.
 *
 * @example topLevelValueSpan('{"a":1, "b" : {"c":2}}', "b") // [15, 22]
 */
export function topLevelValueSpan(text: string, key: string): [number, number] | null {
  let found: [number, number] | null = null;
  let i = text.indexOf("{") + 1;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] !== '"') return found; // `}`: the end of the object
    const keyEnd = stringEnd(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd) + 1; // past the colon
    const from = skipSpace(text, i);
    const to = valueEnd(text, from);
    if (name === key) found = [from, to];
    i = skipSpace(text, to);
    if (text[i] !== ",") return found;
    i++;
  }
}

function skipSpace(text: string, i: number): number {
  while (
    i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\r" || text[i] === "\n")
  ) i++;
  return i;
}

/** Past the closing quote of the string opening at `i`. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** Past the value starting at `i`: a string, an object or array (strings inside skipped), a scalar. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') j = stringEnd(text, j) - 1;
      else if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        if (--depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !/[\s,}\]]/.test(text[j]!)) j++;
  return j;
}
