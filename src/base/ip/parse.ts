/**
 * Strict IP address parsing (docs/decisions.md, "Addresses").
 *
 * Accepted: IPv4 as a dotted quad of decimal octets without leading zeros, and
 * IPv6 in every RFC 4291 textual form (any case, one `::`, 1–4 hex digits per
 * group, an embedded dotted-quad tail). IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is
 * reported as the IPv4 address. Everything else is an `InvalidIpError` whose
 * reason says what is wrong.
 *
 * A hand-written scanner rather than regular expressions: it runs on every
 * request, does one pass over at most {@link MAX_IP_TEXT_LENGTH} characters and
 * cannot backtrack.
 *
 * @module
 */

import { InvalidIpError } from "../errors.ts";

/** A validated address. Treat it as immutable. */
export interface ParsedIp {
  version: 4 | 6;
  /** Canonical text: dotted quad, or RFC 5952 for IPv6. */
  address: string;
  /**
   * Network-order bytes: 4 for IPv4, 16 for IPv6. A view into a shared pool
   * (see {@link parseIp}): index it, or honour `byteOffset`/`byteLength`;
   * never read `bytes.buffer` as if it held only this address.
   */
  bytes: Uint8Array;
}

/**
 * Longest valid input: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255` (45).
 * Zone ids are rejected, so nothing valid is longer; checked before any work.
 */
export const MAX_IP_TEXT_LENGTH = 45;

const CH_0 = 0x30;
const CH_9 = 0x39;
const CH_DOT = 0x2e;
const CH_COLON = 0x3a;

/** Value of a hex digit, or -1. */
function hexValue(c: number): number {
  if (c >= CH_0 && c <= CH_9) return c - CH_0;
  const l = c | 0x20; // ASCII lower case
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0xfeff ||
    c === 0x2028 || c === 0x2029 || (c >= 0x2000 && c <= 0x200a) || c === 0x3000;
}

/** Printable form of one character for an error reason. */
function describeChar(text: string, i: number): string {
  const cp = text.codePointAt(i) ?? 0;
  return JSON.stringify(String.fromCodePoint(cp));
}

function fail(text: string, reason: string): never {
  throw new InvalidIpError(text, reason); // the message caps the echo (errors.ts)
}

/**
 * Parses a dotted quad in `text[start, end)` into `out[at..at+4)`.
 * Returns null on success, else the reason.
 */
function scanIpv4(
  text: string,
  start: number,
  end: number,
  out: Uint8Array,
  at: number,
): string | null {
  // Characters first, so "localhost" or "0x7f.1" get a reason about what they are.
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === CH_DOT) dots++;
    else if (c < CH_0 || c > CH_9) {
      const hexPrefix = (c | 0x20) === 0x78 && i > start && text.charCodeAt(i - 1) === CH_0 &&
        (i - 1 === start || text.charCodeAt(i - 2) === CH_DOT);
      if (hexPrefix) {
        return "hexadecimal IPv4 octets are not accepted";
      }
      return `invalid character ${describeChar(text, i)}`;
    }
  }
  if (dots !== 3) return `an IPv4 address needs exactly 4 decimal octets, got ${dots + 1}`;

  let i = start;
  for (let octet = 0; octet < 4; octet++) {
    const first = i;
    let value = 0;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === CH_DOT) break;
      // Leading zeros read as octal in some parsers (inet_aton); refuse them.
      if (i > first && text.charCodeAt(first) === CH_0) {
        return "leading zeros in IPv4 octets are not accepted";
      }
      if (i - first === 3) return "an IPv4 octet has at most 3 digits";
      value = value * 10 + (c - CH_0);
    }
    if (i === first) return "empty IPv4 octet";
    if (value > 255) return `IPv4 octet ${value} is greater than 255`;
    out[at + octet] = value;
    i++; // skip the dot (or step past `end` after the last octet)
  }
  return null;
}

/** Parses IPv6 text (known to contain a colon) into 16 bytes, or returns the reason. */
function scanIpv6(text: string, out: Uint8Array): string | null {
  const n = text.length;
  // Groups are written to `out` as they come; `gap` is the group index where
  // `::` stood (-1 when absent), so the groups after it can be moved right.
  let count = 0;
  let gap = -1;
  let i = 0;

  if (text.charCodeAt(0) === CH_COLON) {
    if (text.charCodeAt(1) !== CH_COLON) return "an address cannot start with a single ':'";
    if (text.charCodeAt(2) === CH_COLON) return "':::' is not valid";
    gap = 0;
    i = 2;
  }

  while (i < n) {
    const first = i;
    let value = 0;
    while (i < n) {
      const h = hexValue(text.charCodeAt(i));
      if (h < 0) break;
      value = value * 16 + h; // at most 45 digits: no overflow worth guarding
      i++;
    }

    if (i < n && text.charCodeAt(i) === CH_DOT) {
      // Embedded IPv4: must be the final 32 bits of the text.
      if (text.indexOf(":", first) >= 0) return "an embedded IPv4 address must come last";
      if (count > 6) return "too many groups for an IPv6 address";
      const reason = scanIpv4(text, first, n, out, count * 2);
      if (reason !== null) return reason;
      count += 2;
      break;
    }
    if (i === first) {
      return i < n ? `invalid character ${describeChar(text, i)}` : "empty IPv6 group";
    }
    if (i - first > 4) return "an IPv6 group has at most 4 hex digits";
    if (count === 8) return "too many groups for an IPv6 address";
    out[count * 2] = value >> 8;
    out[count * 2 + 1] = value & 0xff;
    count++;

    if (i === n) break;
    if (text.charCodeAt(i) !== CH_COLON) return `invalid character ${describeChar(text, i)}`;
    i++;
    if (i < n && text.charCodeAt(i) === CH_COLON) {
      if (gap >= 0) return "'::' may appear only once";
      gap = count;
      i++;
      if (i < n && text.charCodeAt(i) === CH_COLON) return "':::' is not valid";
    } else if (i === n) {
      return "an address cannot end with a single ':'";
    }
  }

  if (gap < 0) {
    if (count !== 8) return `an IPv6 address needs 8 groups, got ${count}`;
    return null;
  }
  // `::` stands for at least one zero group.
  if (count > 7) return "too many groups for an IPv6 address with '::'";
  const tailBytes = (count - gap) * 2;
  const zeroBytes = 16 - count * 2;
  out.copyWithin(gap * 2 + zeroBytes, gap * 2, gap * 2 + tailBytes);
  out.fill(0, gap * 2, gap * 2 + zeroBytes);
  return null;
}

/** Dotted-quad text of 4 bytes (`bytes[offset..offset+4)`). */
function formatIpv4(bytes: Uint8Array, offset = 0): string {
  return `${bytes[offset]}.${bytes[offset + 1]}.${bytes[offset + 2]}.${bytes[offset + 3]}`;
}

// Hex text of a byte, without and with a leading zero: group text is built
// from two table reads instead of Number#toString(16).
const HEX: readonly string[] = Array.from({ length: 256 }, (_, k) => k.toString(16));
const HEX2: readonly string[] = HEX.map((h) => h.padStart(2, "0"));

/**
 * RFC 5952 text of 16 bytes: lower case, no leading zeros, the longest run of
 * two or more zero groups compressed to `::` (the first one on ties). The
 * dotted-quad tail is never used, like Python's `ipaddress` and WHATWG URLs.
 */
export function formatIpv6(bytes: Uint8Array): string {
  let bestStart = -1;
  let bestLen = 1; // runs of one group are not compressed
  let runStart = -1;
  for (let g = 0; g < 8; g++) {
    if (bytes[g * 2] === 0 && bytes[g * 2 + 1] === 0) {
      if (runStart < 0) runStart = g;
      if (g - runStart + 1 > bestLen) {
        bestLen = g - runStart + 1;
        bestStart = runStart;
      }
    } else {
      runStart = -1;
    }
  }
  let s = "";
  for (let g = 0; g < 8; g++) {
    if (g === bestStart) {
      s += "::";
      g += bestLen - 1;
      continue;
    }
    if (g > 0 && g !== bestStart + bestLen) s += ":";
    const hi = bytes[g * 2] ?? 0;
    const lo = bytes[g * 2 + 1] ?? 0;
    s += hi === 0 ? HEX[lo] : HEX[hi]! + HEX2[lo];
  }
  return s;
}

/** True for `::ffff:0:0/96`, the IPv4-mapped IPv6 block. */
function isIpv4Mapped(b: Uint8Array): boolean {
  for (let k = 0; k < 10; k++) if (b[k] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

// Allocation: a fresh typed array costs far more than the whole parse (its
// ArrayBuffer goes through the embedder's allocator), so addresses are scanned
// into one scratch array, then copied into views of a shared 8 KiB slab, the
// way Node pools small Buffers. A retained result keeps its slab alive:
// at most 8 KiB per live ParsedIp, usually far less as results die together.
// Kept at module level for speed (bench/ip_parser_bench.ts times parseIp): parseIp
// is a pure function of its text, called on every request, with no object to
// pass a pool down through. Only takeBytes touches the pool.
const scratch = new Uint8Array(16);
const SLAB_SIZE = 8192;
/** The slab addresses' bytes are copied into, and how much of it is taken. */
const pool = { slab: new ArrayBuffer(0), offset: 0 };

/** A pooled copy of `src[from..from+length)`. */
function takeBytes(src: Uint8Array, from: number, length: number): Uint8Array {
  if (pool.offset + length > pool.slab.byteLength) {
    pool.slab = new ArrayBuffer(SLAB_SIZE);
    pool.offset = 0;
  }
  const view = new Uint8Array(pool.slab, pool.offset, length);
  pool.offset += length;
  for (let k = 0; k < length; k++) view[k] = src[from + k]!;
  return view;
}

/** Longest address with a port worth naming as such: `[` + address + `]:65535`. */
const MAX_WITH_PORT_LENGTH = MAX_IP_TEXT_LENGTH + 8;

/** True when `text[from, n)` is 1 to 5 decimal digits (a port). */
function isPort(text: string, from: number): boolean {
  const digits = text.length - from;
  if (digits < 1 || digits > 5) return false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < CH_0 || c > CH_9) return false;
  }
  return true;
}

/**
 * The reason for an address written the way a log or a URL writes it with a
 * port (`203.0.113.10:51234`, `[2001:db8::1]:443`) or in brackets
 * (`[2001:db8::1]`), or null. Without it the first reads as an IPv6 address
 * with a misplaced IPv4 tail. Only when the address part itself is valid.
 */
function portReason(text: string): string | null {
  if (text.charCodeAt(0) === 0x5b) { // '['
    const close = text.indexOf("]");
    if (close < 0 || typeof parseIpOrReason(text.slice(1, close)) === "string") return null;
    if (close === text.length - 1) return "brackets are not accepted; give the address alone";
    if (text.charCodeAt(close + 1) !== CH_COLON || !isPort(text, close + 2)) return null;
    return `it carries a port (${JSON.stringify(text.slice(close + 1))}); give the address alone`;
  }
  // Unbracketed, only after a dotted quad: "2001:db8::1:443" is a valid IPv6 address.
  const colon = text.lastIndexOf(":");
  if (colon < 0 || text.lastIndexOf(".") > colon || text.indexOf(".") < 0) return null;
  if (!isPort(text, colon + 1) || typeof parseIpOrReason(text.slice(0, colon)) === "string") {
    return null;
  }
  return `it carries a port (${JSON.stringify(text.slice(colon))}); give the address alone`;
}

/**
 * Parses and validates one IP address. Synchronous and allocation-light:
 * `bytes` is a 4- or 16-byte view into a shared slab (see {@link ParsedIp}).
 *
 * @throws {InvalidIpError} with a reason naming the problem (zone id, CIDR
 * prefix, leading zeros, spaces, length, group/octet count, bad character...).
 */
export function parseIp(text: string): ParsedIp {
  if (typeof text !== "string") fail(String(text), "not a string");
  const parsed = parseIpOrReason(text);
  if (typeof parsed === "string") fail(text, parsed);
  return parsed;
}

/**
 * {@link parseIp} without the throw: the parsed address, or the reason it is
 * not one (what InvalidIpError's message would say after the address). A bulk
 * list of a log's lines pays for no Error and its stack per invalid line.
 */
export function parseIpOrReason(text: string): ParsedIp | string {
  const n = text.length;
  if (n === 0) return "empty string";
  // Before the length check: "[v6]:port" of a valid long address is longer than any address.
  if (n <= MAX_WITH_PORT_LENGTH) {
    const reason = portReason(text);
    if (reason !== null) return reason;
  }
  if (n > MAX_IP_TEXT_LENGTH) return `too long (at most ${MAX_IP_TEXT_LENGTH} characters)`;

  // One pass for the characters that get a specific reason, so that e.g.
  // "fe80::1%eth0" says "zone id" rather than "invalid character".
  let colon = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === CH_COLON) colon = true;
    else if (c === 0x25) { // '%': a zone id after an address; first, a stray escape
      return i > 0 ? "zone ids are not accepted" : "it starts with '%' (a malformed escape?)";
    } else if (c === 0x2f) return "CIDR prefixes are not accepted"; // '/'
    else if (isWhitespace(c)) {
      return i === 0 || i === n - 1
        ? "surrounding spaces are not accepted"
        : "spaces are not accepted inside an address";
    }
  }

  const out = scratch;
  if (!colon) {
    const reason = scanIpv4(text, 0, n, out, 0);
    if (reason !== null) return reason;
    // Accepted text has no leading zeros, so it is already canonical.
    return { version: 4, address: text, bytes: takeBytes(out, 0, 4) };
  }

  const reason = scanIpv6(text, out);
  if (reason !== null) return reason;
  if (isIpv4Mapped(out)) {
    const bytes = takeBytes(out, 12, 4);
    return { version: 4, address: formatIpv4(bytes), bytes };
  }
  return { version: 6, address: formatIpv6(out), bytes: takeBytes(out, 0, 16) };
}
