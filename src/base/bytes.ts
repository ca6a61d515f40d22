/** Byte arrays joined: what a bounded body read, a line reader and the log sink each need. */

/** `parts` as one array; `size` is their total length when the caller already counted it. */
export function concatBytes(
  parts: readonly Uint8Array[],
  size = parts.reduce((n, part) => n + part.length, 0),
): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
