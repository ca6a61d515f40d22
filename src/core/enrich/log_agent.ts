/**
 * An access log line's user agent: the combined format's last field, in
 * quotes (`... "GET / HTTP/1.1" 200 612 "-" "Mozilla/5.0 ..."`). The common
 * format ends with the response size, not a quoted field: it has none.
 */

/**
 * The user agent of a log line, unescaped (Apache writes `\"` and `\\`;
 * nginx `\x22`, left as written); null when the line does not end with a
 * quoted field, or the field is `-` or empty.
 *
 * @example logUserAgent('1.1.1.1 - - [..] "GET / HTTP/1.1" 200 2 "-" "curl/8.5.0"') // "curl/8.5.0"
 */
export function logUserAgent(line: string): string | null {
  let close = line.length - 1;
  while (close > 0 && (line[close] === " " || line[close] === "\t" || line[close] === "\r")) {
    close--;
  }
  if (close <= 0 || line[close] !== '"' || escaped(line, close)) return null;
  // The opening quote: the last one before, not escaped, that starts a field.
  let open = line.lastIndexOf('"', close - 1);
  while (open > 0 && (escaped(line, open) || line[open - 1] !== " ")) {
    open = line.lastIndexOf('"', open - 1);
  }
  if (open === -1) return null;
  const raw = line.slice(open + 1, close);
  const agent = raw.includes("\\") ? raw.replace(/\\(["\\])/g, "$1") : raw;
  return agent === "-" || agent.trim() === "" ? null : agent;
}

/** Whether the character at `i` follows an odd run of backslashes. */
function escaped(text: string, i: number): boolean {
  let n = 0;
  while (i - 1 - n >= 0 && text[i - 1 - n] === "\\") n++;
  return n % 2 === 1;
}
