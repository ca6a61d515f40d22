/**
 * Who is calling: the TCP peer, or the client a trusted proxy forwarded for.
 *
 * Only one forwarding header is believed (`IPINTEL_FORWARDED_HEADER`), and only
 * when the peer is a trusted proxy: a client can always send any header, so
 * reading a second one (or any from an untrusted peer) lets it pick its address.
 */

import { FORWARDED_HEADERS, type ForwardedHeader } from "../../base/config.ts";
import { BadRequestError, quoteInput } from "../../base/errors.ts";
import { type Cidr, cidrContains, parseCidr } from "../../base/ip/cidr.ts";
import { type ParsedIp, parseIp } from "../../base/ip/parse.ts";
import { type AppContext, peerAddress } from "./env.ts";

/** The caller's canonical address, from the peer address and the request headers. */
export type ClientAddressResolver = (peer: string, headers: Headers) => string;

export interface ClientAddressOptions {
  /** CIDR texts (config validates them; a bad one still throws here, at start-up). */
  trustedProxies: readonly string[];
  /** The one header read from trusted peers. */
  forwardedHeader: ForwardedHeader;
}

/**
 * Builds the resolver once. From a trusted peer, the chosen header's hops are
 * walked from the right: the first address that is not itself a trusted proxy
 * is the client (when every hop is trusted, the left-most one). A hop that
 * hides its address (`unknown`, an obfuscated `_id`) ends the walk at the hop
 * to its right. A malformed value in the part of the header that must be read
 * is refused with a 400 (BadRequestError) rather than guessed at: everything
 * the walk reaches was written or passed on by a trusted proxy.
 *
 * @example createClientAddressResolver({ trustedProxies: ["10.0.0.0/8"], forwardedHeader: "x-forwarded-for" })
 */
export function createClientAddressResolver(options: ClientAddressOptions): ClientAddressResolver {
  const trusted: Cidr[] = options.trustedProxies.map((text) => {
    try {
      return parseCidr(text);
    } catch (error) {
      throw new Error(
        `Invalid IPINTEL_TRUSTED_PROXIES entry "${text}": ${(error as Error).message}`,
      );
    }
  });
  const header = options.forwardedHeader;
  if (!FORWARDED_HEADERS.includes(header)) {
    throw new Error(
      `Invalid forwarded header "${header}": expected ${FORWARDED_HEADERS.join(", ")}`,
    );
  }
  const isTrusted = (ip: ParsedIp) => trusted.some((cidr) => cidrContains(cidr, ip));
  const readHops = HOP_READERS[header];

  return (peer, headers) => {
    const peerIp = tryParse(peer);
    if (!peerIp) return peer; // not an IP peer (e.g. a Unix socket): nothing to resolve
    if (trusted.length === 0 || !isTrusted(peerIp)) return peerIp.address;
    const value = headers.get(header);
    if (value === null) return peerIp.address;
    const hops = readHops(value);
    let client = peerIp;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (hop === HIDDEN) break;
      const ip = hop === MALFORMED ? null : tryParse(hop);
      if (!ip) {
        throw new BadRequestError(
          `Invalid ${HEADER_NAMES[header]} header from a trusted proxy: ${quoteInput(value)}`,
        );
      }
      client = ip;
      if (!isTrusted(ip)) break;
    }
    return client.address;
  };
}

/** A hop that deliberately does not name an address (RFC 7239 `unknown` or `_obfuscated`). */
const HIDDEN = Symbol("hidden");
/** A list whose syntax is broken at this element: nothing from here leftwards can be read. */
const MALFORMED = Symbol("malformed");
type Hop = string | typeof HIDDEN | typeof MALFORMED;

const HEADER_NAMES: Record<ForwardedHeader, string> = {
  "x-forwarded-for": "X-Forwarded-For",
  forwarded: "Forwarded",
  "x-real-ip": "X-Real-IP",
};

const HOP_READERS: Record<ForwardedHeader, (value: string) => Hop[]> = {
  "x-forwarded-for": (value) => listElements(value).map(addressOfNode),
  "x-real-ip": (value) => {
    const elements = listElements(value);
    // One address; several (the header sent twice) cannot be told apart.
    return elements.length === 1 ? [addressOfNode(elements[0]!)] : [MALFORMED];
  },
  forwarded: forwardedHops,
};

/** Comma-separated list elements, trimmed; empty elements are skipped (RFC 9110 5.6.1). */
function listElements(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

const IPV4_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED = /^\[([0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)\](?::\d{1,5})?$/;

/**
 * The address of one node: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
 * `[2001:db8::1]`, `[2001:db8::1]:4711`; `unknown` and `_obfuscated` are hidden.
 * Anything else is returned as is and fails to parse as an address.
 */
function addressOfNode(node: string): Hop {
  if (node.toLowerCase() === "unknown" || /^_[A-Za-z0-9._-]+$/.test(node)) return HIDDEN;
  const bracketed = BRACKETED.exec(node);
  if (bracketed) return bracketed[1]!;
  if (node.startsWith("[")) return MALFORMED;
  return IPV4_PORT.exec(node)?.[1] ?? node;
}

/**
 * The `for=` node of each element of a `Forwarded` header (RFC 7239), parsed
 * strictly: `token=value` pairs separated by `;`, elements by `,`, values a
 * token or a quoted string. An element without `for` is hidden. A syntax error
 * anywhere makes the whole header malformed: after an unclosed quote, say, no
 * comma can be trusted to separate hops.
 */
function forwardedHops(value: string): Hop[] {
  const elements = parseForwarded(value);
  if (elements === null) return [MALFORMED];
  return elements.map((element) => {
    const node = element.get("for");
    return node === undefined ? HIDDEN : addressOfNode(node);
  });
}

const TOKEN = /[!#$%&'*+.^_`|~0-9A-Za-z-]+/y;
// qdtext and quoted-pair of RFC 9110 5.6.4 (header values are Latin-1 here).
const QUOTED = /"((?:[\t !#-\[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*)"/y;
const OWS = /[ \t]*/y;

/** A Forwarded header's elements (lower-case parameter name → value), or null on a syntax error. */
function parseForwarded(value: string): Map<string, string>[] | null {
  const elements: Map<string, string>[] = [];
  let at = 0;
  const skip = (re: RegExp) => {
    re.lastIndex = at;
    const match = re.exec(value);
    if (match) at = re.lastIndex;
    return match;
  };
  let current = new Map<string, string>();
  for (;;) {
    skip(OWS);
    if (at >= value.length) break;
    if (value[at] === "," || value[at] === ";") {
      if (value[at] === "," && current.size > 0) {
        elements.push(current);
        current = new Map();
      }
      at++;
      continue;
    }
    const name = skip(TOKEN);
    skip(OWS);
    if (!name || value[at] !== "=") return null;
    at++;
    skip(OWS);
    const quoted = value[at] === '"' ? skip(QUOTED) : null;
    const token = quoted ? null : skip(TOKEN);
    if (!quoted && !token) return null;
    const key = name[0].toLowerCase();
    // A repeated parameter in one element is an error (RFC 7239 section 4).
    if (current.has(key)) return null;
    current.set(key, quoted ? quoted[1]!.replace(/\\(.)/g, "$1") : token![0]);
    skip(OWS);
    if (at < value.length && value[at] !== "," && value[at] !== ";") {
      return null;
    }
  }
  if (current.size > 0) elements.push(current);
  return elements;
}

function tryParse(text: string): ParsedIp | null {
  try {
    return parseIp(text);
  } catch {
    return null; // the caller reports the header, not the address
  }
}

/**
 * The caller's address of `c`, resolved once per request (kept in the
 * context as `client`): the route, the key rule and the access log all read
 * this one.
 */
export function clientOf(c: AppContext, resolve: ClientAddressResolver): string {
  let address = c.get("client");
  if (address === undefined) {
    address = resolve(peerAddress(c), c.req.raw.headers);
    c.set("client", address);
  }
  return address;
}
