/**
 * User-agent parsing with ua-parser-js 1.x (MIT; 2.x is AGPL and must not be
 * used), mapped to the `UserAgent` shape (docs/decisions.md, "User agent"):
 *
 * - `device.type` is "desktop" when the parser reports no type and the OS is a
 *   desktop OS ({@link DESKTOP_OS_NAMES});
 * - `cpu.architecture` is "Unknown" when the parser reports none;
 * - every other unknown part is null; an empty or absent user agent gives all
 *   nulls (and "Unknown").
 *
 * @module
 */

import { UAParser } from "ua-parser-js";
import { LruCache } from "../../base/cache/lru.ts";
import { ownCopy } from "../../base/cache/own_copy.ts";
import type { UserAgent } from "../../base/types.ts";
import { sharedPart } from "../../base/shared_part.ts";

/**
 * Characters of a user agent that are parsed; the rest is ignored. It is
 * ua-parser-js's own limit (UA_MAX_LENGTH = 500), applied before the cache and
 * the regular expressions so a hostile 100 KB header costs as much as a normal one.
 */
export const UA_MAX_LENGTH = 500;

/** Default number of distinct user agents kept by the cache. */
export const DEFAULT_UA_CACHE_SIZE = 10_000;

/**
 * OS names (lower case, as ua-parser-js 1.0.41 reports them) that mean a
 * desktop or laptop computer: Windows, macOS, Linux and the distributions the
 * parser names, Chrome OS, the BSDs, Solaris and other Unix workstations, and
 * desktop hobby OSes. Not included: mobile and embedded systems (Android, iOS,
 * "Windows Phone"/"Windows Mobile"/"Windows IoT", "Ubuntu Touch", Tizen,
 * webOS, KaiOS, Fuchsia, Contiki, ...).
 */
export const DESKTOP_OS_NAMES: ReadonlySet<string> = new Set([
  "windows",
  "mac os",
  "macos",
  "chromium os",
  "chrome os",
  "linux",
  "gnu",
  "hurd",
  "ubuntu",
  "kubuntu",
  "xubuntu",
  "lubuntu",
  "debian",
  "suse",
  "opensuse",
  "gentoo",
  "arch",
  "slackware",
  "fedora",
  "mandriva",
  "centos",
  "pclinuxos",
  "red hat",
  "redhat",
  "zenwalk",
  "linpus",
  "raspbian",
  "deepin",
  "manjaro",
  "elementary os",
  "sabayon",
  "linspire",
  "mint",
  "mageia",
  "vectorlinux",
  "freebsd",
  "netbsd",
  "openbsd",
  "pc-bsd",
  "ghostbsd",
  "dragonfly",
  "solaris",
  "opensolaris",
  "aix",
  "hp-ux",
  "unix",
  "plan 9",
  "risc os",
  "haiku",
  "beos",
  "os/2",
  "amigaos",
  "morphos",
  "serenityos",
]);

/** Options of {@link createUserAgentParser}. */
export interface UserAgentParserOptions {
  /** Distinct user agents cached (LRU); 0 disables the cache. Default {@link DEFAULT_UA_CACHE_SIZE}. */
  cacheSize?: number;
}

/**
 * Parses a user-agent string. The returned object is deeply frozen and may be
 * shared between calls (it comes from a cache): serialise it, never mutate it.
 */
export type UserAgentParser = (ua: string | null | undefined) => UserAgent;

/** The subset of a ua-parser-js 1.x result that is read. */
interface RawResult {
  browser: { name?: string; version?: string };
  engine: { name?: string; version?: string };
  os: { name?: string; version?: string };
  device: { type?: string; vendor?: string; model?: string };
  cpu: { architecture?: string };
}

/** The result for an empty or absent user agent. */
export const EMPTY_USER_AGENT: UserAgent = sharedPart({
  browser: { name: null, version: null },
  engine: { name: null, version: null },
  os: { name: null, version: null },
  device: { type: null, vendor: null, model: null },
  cpu: { architecture: "Unknown" },
});

/** Parser output to our shape: absent or empty strings become null. */
function orNull(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

// C0 and C1 control characters: never meaningful in a user agent, and not
// representable in XML 1.0, so they are read as spaces.
// deno-lint-ignore no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Caps `ua` at {@link UA_MAX_LENGTH} without leaving half a surrogate pair: the part
 * of a user agent that is parsed, and its cache key. A copy of its own: a slice would keep
 * the whole header alive for as long as the cache keeps the key (see ownCopy).
 */
export function capLength(ua: string): string {
  if (ua.length <= UA_MAX_LENGTH) return ua;
  let end = UA_MAX_LENGTH;
  const last = ua.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return ownCopy(ua.slice(0, end));
}

function toUserAgent(raw: RawResult): UserAgent {
  const osName = orNull(raw.os.name);
  let type = orNull(raw.device.type);
  if (type === null && osName !== null && DESKTOP_OS_NAMES.has(osName.toLowerCase())) {
    type = "desktop";
  }
  return sharedPart({
    browser: { name: orNull(raw.browser.name), version: orNull(raw.browser.version) },
    engine: { name: orNull(raw.engine.name), version: orNull(raw.engine.version) },
    os: { name: osName, version: orNull(raw.os.version) },
    device: { type, vendor: orNull(raw.device.vendor), model: orNull(raw.device.model) },
    cpu: { architecture: orNull(raw.cpu.architecture) ?? "Unknown" },
  });
}

/**
 * Creates a user-agent parser with its own bounded LRU cache, keyed by the
 * capped string. Input beyond {@link UA_MAX_LENGTH} characters is ignored.
 */
export function createUserAgentParser(options: UserAgentParserOptions = {}): UserAgentParser {
  const cache = new LruCache<string, UserAgent>(options.cacheSize ?? DEFAULT_UA_CACHE_SIZE);
  // One parser instance, re-targeted with setUA: parsing is synchronous, and
  // this avoids rebuilding its closures on every call. Constructed with a
  // non-empty string: with "" it would fall back to (and take client hints
  // from) the runtime's own navigator when a `window` global exists.
  const parser = new UAParser(" ");

  return (ua) => {
    if (typeof ua !== "string" || ua === "") return EMPTY_USER_AGENT;
    const key = capLength(ua);
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const text = key.replace(CONTROL_CHARS, " ");
    const result = text.trim() === ""
      ? EMPTY_USER_AGENT
      : toUserAgent(parser.setUA(text).getResult() as RawResult);
    cache.set(key, result);
    return result;
  };
}
