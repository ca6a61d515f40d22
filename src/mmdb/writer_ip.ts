/**
 * Address parsing for the MaxMind DB writer: text → 4 big-endian 32-bit words of the
 * 128-bit tree key. IPv4 a.b.c.d becomes ::a.b.c.d (the IPv4 subtree lives at ::/96).
 * Strict: dotted-quad IPv4 without leading zeros; IPv6 per RFC 4291 text forms
 * (one "::", optional trailing dotted quad), no zone ids. Errors throw a bare reason;
 * the writer adds which input it was.
 */

function parseV4Number(s: string, from: number, to: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = from; i <= to; i++) {
    const c = i === to ? 46 : s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0) throw new Error("empty IPv4 octet");
      if (++parts > 4) throw new Error("IPv4 address has more than 4 octets");
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && part === 0) throw new Error("IPv4 octet with a leading zero");
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) throw new Error("IPv4 octet above 255");
    } else {
      throw new Error(`unexpected character ${JSON.stringify(s[i])}`);
    }
  }
  if (parts !== 4) throw new Error("IPv4 address needs 4 octets");
  return value;
}

function hexGroup(g: string): number {
  if (g.length === 0 || g.length > 4) {
    throw new Error(g.length ? `IPv6 group "${g}" is longer than 4 digits` : "empty IPv6 group");
  }
  let v = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g.charCodeAt(i);
    const d = c >= 48 && c <= 57
      ? c - 48
      : c >= 97 && c <= 102
      ? c - 87
      : c >= 65 && c <= 70
      ? c - 55
      : -1;
    if (d < 0) throw new Error(`unexpected character ${JSON.stringify(g[i])}`);
    v = v * 16 + d;
  }
  return v;
}

function groupsOf(part: string, allowV4Tail: boolean): number[] {
  if (part === "") return [];
  const raw = part.split(":");
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const g = raw[i]!;
    if (allowV4Tail && i === raw.length - 1 && g.includes(".")) {
      const v4 = parseV4Number(g, 0, g.length);
      out.push(v4 >>> 16, v4 & 0xffff);
    } else {
      out.push(hexGroup(g));
    }
  }
  return out;
}

function parseV6(s: string, out: Uint32Array): void {
  if (s.includes("%")) throw new Error("zone ids are not supported");
  const dbl = s.indexOf("::");
  let groups: number[];
  if (dbl === -1) {
    groups = groupsOf(s, true);
    if (groups.length !== 8) throw new Error("IPv6 address needs 8 groups (or ::)");
  } else {
    if (s.indexOf("::", dbl + 1) !== -1) throw new Error('more than one "::"');
    const head = groupsOf(s.slice(0, dbl), false);
    const tail = groupsOf(s.slice(dbl + 2), true);
    if (head.length + tail.length > 7) throw new Error('too many groups around "::"');
    groups = head.concat(new Array<number>(8 - head.length - tail.length).fill(0), tail);
  }
  for (let i = 0; i < 4; i++) out[i] = ((groups[2 * i]! << 16) | groups[2 * i + 1]!) >>> 0;
}

/** Parses `text` into `out`; returns true for IPv4. Throws on bad text. */
export function parseAddress(text: string, out: Uint32Array): boolean {
  if (typeof text !== "string") throw new Error("address is not a string");
  if (text.includes(":")) {
    parseV6(text, out);
    return false;
  }
  out[0] = 0;
  out[1] = 0;
  out[2] = 0;
  out[3] = parseV4Number(text, 0, text.length);
  return true;
}

/**
 * Parses "addr/len" (or a bare address = one host) into its first and last address.
 * Host bits set below the prefix are an error, not silently cleared.
 */
export function parseCidr(text: string, first: Uint32Array, last: Uint32Array): void {
  if (typeof text !== "string") throw new Error("CIDR is not a string");
  const slash = text.indexOf("/");
  const addr = slash === -1 ? text : text.slice(0, slash);
  const v4 = parseAddress(addr, first);
  const max = v4 ? 32 : 128;
  let len = max;
  if (slash !== -1) {
    const p = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) throw new Error(`bad prefix length "${p}"`);
    len = Number(p);
    if (len > max) throw new Error(`prefix length ${len} exceeds ${max}`);
  }
  const bits = v4 ? len + 96 : len;
  for (let i = 0; i < 4; i++) {
    const keep = Math.min(32, Math.max(0, bits - 32 * i));
    const host = keep === 32 ? 0 : (0xffffffff >>> keep) >>> 0;
    if ((first[i]! & host) !== 0) {
      throw new Error(`host bits set below /${len} (the network address is needed)`);
    }
    last[i] = (first[i]! | host) >>> 0;
  }
}

/** Compares two 128-bit keys: negative, 0 or positive. */
export function compareWords(a: Uint32Array, b: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return 0;
}
