/** Minimal reader for the ustar archives inside npm tarballs (regular files only). */

const BLOCK = 512;

/** One regular file of an archive. */
export interface TarEntry {
  path: string;
  bytes: Uint8Array;
}

/**
 * Lists the regular files of an uncompressed tar archive.
 * Throws on a truncated or corrupt archive rather than returning part of it.
 */
export function readTar(archive: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  const decoder = new TextDecoder();
  let offset = 0;
  let longName: string | null = null;
  for (;;) {
    if (offset + BLOCK > archive.length) {
      throw new Error(
        `Corrupt tar archive: truncated at byte ${offset} (no end-of-archive marker)`,
      );
    }
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break; // end-of-archive marker
    verifyChecksum(header, offset);
    const size = parseOctal(header.subarray(124, 136), offset, "size");
    const type = String.fromCharCode(header[156] ?? 0);
    const name = cString(decoder, header.subarray(0, 100));
    const prefix = cString(decoder, header.subarray(345, 500));
    const start = offset + BLOCK;
    const end = start + size;
    if (end > archive.length) {
      throw new Error(`Corrupt tar archive: entry "${name}" runs past the end of the archive`);
    }
    const body = archive.subarray(start, end);
    if (type === "L") {
      longName = cString(decoder, body); // GNU long name for the next entry
    } else if (type === "x") {
      longName = paxPath(decoder, body) ?? longName; // pax header for the next entry
    } else if (type === "0" || type === "\0") {
      const path = longName ?? (prefix ? `${prefix}/${name}` : name);
      entries.push({ path, bytes: body });
      longName = null;
    } else {
      longName = null; // directories, pax headers, links: not needed for npm packages
    }
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries;
}

function cString(decoder: TextDecoder, bytes: Uint8Array): string {
  const nul = bytes.indexOf(0);
  return decoder.decode(nul === -1 ? bytes : bytes.subarray(0, nul));
}

function parseOctal(field: Uint8Array, at: number, name: string): number {
  const text = String.fromCharCode(...field).replace(/\0.*$/s, "").trim();
  if (!/^[0-7]+$/.test(text)) {
    throw new Error(`Corrupt tar archive: bad ${name} field at byte ${at}`);
  }
  return parseInt(text, 8);
}

/**
 * The `path` record of a pax extended header (`"<len> path=<value>\n"` records).
 * `<len>` counts bytes (UTF-8), so records are cut from the bytes, then decoded.
 */
function paxPath(decoder: TextDecoder, records: Uint8Array): string | null {
  let at = 0;
  let path: string | null = null;
  while (at < records.length) {
    const space = records.indexOf(0x20, at);
    const length = Number(String.fromCharCode(...records.subarray(at, space)));
    if (space === -1 || !Number.isInteger(length) || length <= 0) break;
    const record = decoder.decode(records.subarray(space + 1, at + length - 1));
    if (record.startsWith("path=")) path = record.slice(5);
    at += length;
  }
  return path;
}

function verifyChecksum(header: Uint8Array, at: number): void {
  const stored = parseOctal(header.subarray(148, 156), at, "checksum");
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  if (sum !== stored) {
    throw new Error(`Corrupt tar archive: header checksum mismatch at byte ${at}`);
  }
}
