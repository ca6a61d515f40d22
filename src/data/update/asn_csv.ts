/** Parses ip-location-db ASN CSV rows: `first,last,asn,organisation`. */

/** One inclusive address range and its autonomous system. */
export interface AsnRange {
  first: string;
  last: string;
  asn: number;
  organization: string;
}

/**
 * Calls `onRange` for each row of the CSV text; the organisation may be
 * RFC 4180-quoted (it often contains commas). A malformed row throws naming
 * its line number, so a corrupt download never compiles silently.
 */
export function parseAsnCsv(text: string, onRange: (range: AsnRange) => void): number {
  let count = 0;
  let lineNo = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    lineNo++;
    const line = text.slice(start, end).replace(/\r$/, "");
    start = end + 1;
    if (line === "") continue;
    const c1 = line.indexOf(",");
    const c2 = line.indexOf(",", c1 + 1);
    const c3 = line.indexOf(",", c2 + 1);
    if (c1 < 1 || c2 < 0 || c3 < 0) throw new Error(`ASN CSV line ${lineNo}: expected 4 fields`);
    const asnText = line.slice(c2 + 1, c3);
    const asn = Number(asnText);
    if (!/^\d{1,10}$/.test(asnText) || asn > 0xffffffff) {
      throw new Error(`ASN CSV line ${lineNo}: invalid AS number "${asnText}"`);
    }
    const range = {
      first: line.slice(0, c1),
      last: line.slice(c1 + 1, c2),
      asn,
      organization: unquote(line.slice(c3 + 1), lineNo),
    };
    try {
      onRange(range);
    } catch (error) {
      // The consumer validates the addresses; say which line they came from.
      throw new Error(`ASN CSV line ${lineNo}: ${(error as Error).message}`);
    }
    count++;
  }
  return count;
}

function unquote(field: string, lineNo: number): string {
  if (!field.startsWith('"')) return field;
  if (field.length < 2 || !field.endsWith('"')) {
    throw new Error(`ASN CSV line ${lineNo}: unterminated quoted field`);
  }
  return field.slice(1, -1).replaceAll('""', '"');
}
