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
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break; // end-of-archive marker
    verifyChecksum(header, offset);
    const size = parseOctal(header.subarray(124, 136), offset);
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

function parseOctal(field: Uint8Array, at: number): number {
  const text = String.fromCharCode(...field).replace(/\0.*$/s, "").trim();
  if (!/^[0-7]+$/.test(text)) throw new Error(`Corrupt tar archive: bad size field at byte ${at}`);
  return parseInt(text, 8);
}

function verifyChecksum(header: Uint8Array, at: number): void {
  const stored = parseOctal(header.subarray(148, 156), at);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  if (sum !== stored) {
    throw new Error(`Corrupt tar archive: header checksum mismatch at byte ${at}`);
  }
}
