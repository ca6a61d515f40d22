/** The sources file (`data/sources.json` or `--sources FILE`): which data to install, from where. */

import { dirname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../../base/config.ts";
import { didYouMean } from "../../base/suggest.ts";
import {
  DATABASE_KINDS,
  FEED_KINDS,
  SOURCE_FORMATS,
  SOURCE_KINDS,
  type SourceFormat,
  type SourceKind,
} from "./manifest.ts";

/** Formats that deliver a MaxMind DB (database kinds). */
const DATABASE_FORMATS: readonly SourceFormat[] = ["npm", "mmdb", "mmdb.gz", "tar.gz"];

/** One source, as the sources file gives it. */
export interface SourceSpec {
  /** Unique; names the source in progress lines, errors, the manifest and /status. */
  name: string;
  kind: SourceKind;
  format: SourceFormat;
  /**
   * http(s) URL, or a `file://` URL (the sources file may give a plain path,
   * relative to itself: it is stored resolved, as a `file://` URL); for `npm`,
   * `npm:<package>` or `npm:<package>@<version>`.
   */
  url: string;
  /** Expected SHA-256 (hex) of the download. */
  sha256?: string;
  /** URL (or path) of a file whose first word is the download's SHA-256 (MaxMind's `.sha256`). */
  sha256Url?: string;
  /** `npm` with a pinned version: the registry's `dist.integrity` (sha512-…). */
  integrity?: string;
  /** `npm`: the files of the package to use (`.mmdb`, `.mmdb.gz`, or ASN `.csv` ranges). */
  members?: string[];
  /** `npm`/MMDB formats: the installed file's name (default `<kind>.mmdb`). */
  file?: string;
  /** Hosting and relay lists: whose network it is ("Amazon Web Services"). */
  provider?: string;
  /** `ipsum`: the fewest blocklists an address must be on to count (default 3). */
  minCount?: number;
  /** Crawler lists (required there): who runs the crawler, e.g. "Google". */
  operator?: string;
  /** Crawler lists (required there): the crawler the ranges are for, e.g. "Googlebot". */
  crawler?: string;
  /**
   * Crawler lists: the user-agent product tokens that claim this crawler
   * (`Googlebot`, `Googlebot-Image`); a user agent naming one from outside the
   * operator's ranges is a fake.
   */
  userAgents?: string[];
  /** Shown by /status and /ready; "not stated" when the file gives none. */
  license: string;
  attribution: string;
  /** Cap on the bytes downloaded, in MB (default: see src/data/update/limits.ts). */
  maxDownloadMB?: number;
  /** Cap on the bytes after decompression, in MB. */
  maxUnpackedMB?: number;
}

/** What /status shows for a licence or attribution the sources file does not give. */
export const NOT_STATED = "not stated";

/** The `ipsum` minimum count when the sources file gives none. */
export const DEFAULT_IPSUM_MIN_COUNT = 3;

/** The fields of the file and of a source: any other is a mistake, named with "did you mean". */
const FILE_FIELDS = ["registry", "sources"] as const;
const SOURCE_FIELDS = [
  "name",
  "kind",
  "format",
  "url",
  "sha256",
  "sha256Url",
  "integrity",
  "members",
  "file",
  "provider",
  "minCount",
  "operator",
  "crawler",
  "userAgents",
  "license",
  "attribution",
  "maxDownloadMB",
  "maxUnpackedMB",
] as const satisfies readonly (keyof SourceSpec)[];

/** Fails to compile while a field of SourceSpec is not in SOURCE_FIELDS. */
const _EVERY_FIELD_LISTED: Record<
  Exclude<keyof SourceSpec, typeof SOURCE_FIELDS[number]>,
  never
> = {};

/** Formats each list kind accepts, where not every list format fits. */
const KIND_FORMATS: Partial<Record<SourceKind, readonly SourceFormat[]>> = {
  location: ["geofeed"],
  crawler: ["crawler-json", "ip-list", "csv-ranges"],
};

/** A crawler's or operator's name: printable ASCII (a header value carries it). */
const PRINTABLE_NAME = /^[\x20-\x7e]{1,64}$/;

/** A user-agent product token (RFC 9110 `token`, as a product name uses it). */
const PRODUCT_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

export interface SourcesFile {
  /** The npm registry of `npm` sources; `IPINTEL_NPM_REGISTRY` wins over it. */
  registry?: string;
  sources: SourceSpec[];
}

/** A sources file that cannot be read or is not valid: a configuration error (exit status 2). */
export class SourcesFileError extends ConfigError {
  override name = "SourcesFileError";
}

/**
 * Reads and validates a sources file; every error is one line naming the file,
 * the entry and the field (an unknown field with the nearest known one).
 */
export async function readSourcesFile(path: string): Promise<SourcesFile> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new SourcesFileError(`Cannot read sources file ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SourcesFileError(
      `Invalid sources file ${path}: not valid JSON: ${(error as Error).message}`,
    );
  }
  return parseSourcesFile(json, path);
}

/**
 * Validates the parsed JSON of a sources file. `label` names it in errors; plain
 * paths in it are relative to `baseDir` (default: the directory of `label`).
 */
export function parseSourcesFile(
  json: unknown,
  label: string,
  baseDir: string = dirname(resolve(label)),
): SourcesFile {
  const fail = (where: string, message: string): never => {
    throw new SourcesFileError(`Invalid sources file ${label}: ${where}${message}`);
  };
  /** A URL or path as the sources file gives it: an http(s) or file URL, or null. */
  const location = (value: string): string | null => sourceLocation(value, baseDir);
  if (!isObject(json)) fail("", 'expected { "sources": [ ... ] }');
  unknownFields(json as Record<string, unknown>, FILE_FIELDS, "", fail);
  const list = (json as Record<string, unknown>).sources;
  if (!Array.isArray(list)) {
    fail(
      "sources ",
      `${list === undefined ? "is missing" : show(list)}: expected a list of sources, [ ... ]`,
    );
  }
  const root = json as { registry?: unknown; sources: unknown[] };
  if (root.registry !== undefined && !isHttpUrl(root.registry)) {
    fail("registry ", `${show(root.registry)}: expected an http(s) URL`);
  }
  const names = new Set<string>();
  const databaseKinds = new Set<string>();
  const sources = root.sources.map((raw, i): SourceSpec => {
    const at = `sources[${i}]`;
    if (!isObject(raw)) return fail(at, ": expected an object");
    const s = raw as Record<string, unknown>;
    const named = typeof s.name === "string"
      ? JSON.stringify(s.name.slice(0, 64)).slice(1, -1)
      : "";
    const where = `${at}${named ? ` (${named})` : ""} `;
    unknownFields(s, SOURCE_FIELDS, where, fail);
    /** A string field; `expected` says what a missing or empty required one should be. */
    const text = (key: string, required: boolean, expected = "a non-empty string") => {
      const value = s[key];
      if (value === undefined && !required) return undefined;
      if (value === undefined) return fail(where, `${key} is missing: expected ${expected}`);
      if (typeof value !== "string" || value.trim() === "") {
        return fail(where, `${key} ${show(value)}: expected ${expected}`);
      }
      return value;
    };
    const name = text("name", true, 'a name of letters, digits, ".", "_" or "-"')!;
    if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(name)) {
      fail(where, `name ${show(name)}: use letters, digits, ".", "_" or "-"`);
    }
    if (names.has(name)) fail(where, `name ${show(name)} is used twice`);
    names.add(name);
    const kind = text("kind", true, `one of ${SOURCE_KINDS.join(", ")}`) as SourceKind;
    if (!SOURCE_KINDS.includes(kind)) {
      fail(where, `kind ${show(kind)}: expected one of ${SOURCE_KINDS.join(", ")}`);
    }
    const format = text("format", true, `one of ${SOURCE_FORMATS.join(", ")}`) as SourceFormat;
    if (!SOURCE_FORMATS.includes(format)) {
      fail(where, `format ${show(format)}: expected one of ${SOURCE_FORMATS.join(", ")}`);
    }
    const isDatabase = (DATABASE_KINDS as readonly string[]).includes(kind);
    if (isDatabase !== DATABASE_FORMATS.includes(format)) {
      fail(
        where,
        isDatabase
          ? `format "${format}" cannot give a ${kind} database: use ${DATABASE_FORMATS.join(", ")}`
          : `format "${format}" cannot give a ${kind} list: use one of ${
            SOURCE_FORMATS.filter((f) => !DATABASE_FORMATS.includes(f)).join(", ")
          }`,
      );
    }
    const only = KIND_FORMATS[kind];
    if (only && !only.includes(format)) {
      fail(where, `format "${format}" cannot give a ${kind} list: use ${only.join(", ")}`);
    }
    if (isDatabase) {
      if (databaseKinds.has(kind)) {
        fail(where, `kind "${kind}": a second ${kind} database: give at most one`);
      }
      databaseKinds.add(kind);
    }
    const given = text(
      "url",
      true,
      format === "npm"
        ? "npm:<package>[@<version>]"
        : "an http(s) URL, a file:// URL or a path (relative to the sources file)",
    )!;
    const url = format === "npm" ? given : location(given);
    if (
      url === null ||
      (format === "npm" && !/^npm:(@[^/@\s]+\/)?[^/@\s]+(@[^@\s]+)?$/.test(url))
    ) {
      fail(
        where,
        `url ${show(given)}: expected ${
          format === "npm"
            ? "npm:<package>[@<version>]"
            : "an http(s) URL, a file:// URL or a path (relative to the sources file)"
        }`,
      );
    }
    const sha256 = text("sha256", false);
    if (sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(sha256)) {
      fail(where, `sha256 ${show(sha256)}: expected 64 hex digits`);
    }
    const givenSha256Url = text("sha256Url", false);
    const sha256Url = givenSha256Url === undefined ? undefined : location(givenSha256Url);
    if (sha256Url === null) {
      fail(
        where,
        `sha256Url ${show(givenSha256Url)}: expected an http(s) URL, a file:// URL or a path`,
      );
    }
    const integrity = text("integrity", false);
    if (integrity !== undefined && !/^sha512-[A-Za-z0-9+/]+=*$/.test(integrity)) {
      fail(where, `integrity ${show(integrity)}: expected sha512-<base64>`);
    }
    let members: string[] | undefined;
    if (format === "npm") {
      if (
        !Array.isArray(s.members) || s.members.length === 0 ||
        s.members.some((m) => typeof m !== "string" || m === "")
      ) {
        fail(where, 'members: expected the package files to use, e.g. ["package/x.mmdb.gz"]');
      }
      members = s.members as string[];
    }
    const file = text("file", false);
    if (file !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*\.mmdb$/.test(file)) {
      fail(where, `file ${show(file)}: expected a plain file name ending in .mmdb`);
    }
    const provider = text("provider", false);
    if (provider !== undefined && kind !== "hosting" && kind !== "relay") {
      fail(where, "provider: only hosting and relay lists name a provider");
    }
    const crawler = crawlerFields(s, kind, where, text, fail);
    let minCount: number | undefined;
    if (s.minCount !== undefined) {
      if (format !== "ipsum") fail(where, 'minCount: only the "ipsum" format has a count');
      if (!Number.isInteger(s.minCount) || (s.minCount as number) < 1) {
        fail(where, `minCount ${show(s.minCount)}: expected a whole number, at least 1`);
      }
      minCount = s.minCount as number;
    }
    const megabytes = (key: "maxDownloadMB" | "maxUnpackedMB") => {
      const value = s[key];
      if (value === undefined) return {};
      if (typeof value !== "number" || !(value > 0) || value > 1_000_000) {
        return fail(where, `${key} ${show(value)}: expected a number of megabytes above 0`);
      }
      return { [key]: value };
    };
    return {
      name,
      kind,
      format,
      url: url!,
      ...megabytes("maxDownloadMB"),
      ...megabytes("maxUnpackedMB"),
      ...(sha256 ? { sha256: sha256.toLowerCase() } : {}),
      ...(sha256Url ? { sha256Url } : {}),
      ...(integrity ? { integrity } : {}),
      ...(members ? { members } : {}),
      ...(file ? { file } : {}),
      ...(provider ? { provider } : {}),
      ...(minCount !== undefined ? { minCount } : {}),
      ...crawler,
      license: text("license", false) ?? NOT_STATED,
      attribution: text("attribution", false) ?? NOT_STATED,
    };
  });
  return { ...(root.registry ? { registry: root.registry as string } : {}), sources };
}

/**
 * A crawler list's `operator`, `crawler` (both required) and `userAgents`
 * (product tokens); other kinds may not name them.
 */
function crawlerFields(
  s: Record<string, unknown>,
  kind: SourceKind,
  where: string,
  text: (key: string, required: boolean, expected?: string) => string | undefined,
  fail: (where: string, message: string) => never,
): Pick<SourceSpec, "operator" | "crawler" | "userAgents"> {
  if (kind !== "crawler") {
    for (const key of ["operator", "crawler", "userAgents"]) {
      if (s[key] !== undefined) fail(where, `${key}: only crawler lists name ${key}`);
    }
    return {};
  }
  const operator = text("operator", true, 'who runs the crawler, e.g. "Google"')!;
  const crawler = text("crawler", true, 'the crawler\'s name, e.g. "Googlebot"')!;
  // Both are written into X-IP-Risk (`crawler:<name>`): a header value takes printable ASCII.
  for (const [key, value] of [["operator", operator], ["crawler", crawler]] as const) {
    if (!PRINTABLE_NAME.test(value)) {
      fail(where, `${key} ${show(value)}: expected printable ASCII, at most 64 characters`);
    }
  }
  const tokens = s.userAgents;
  if (tokens === undefined) return { operator, crawler };
  if (
    !Array.isArray(tokens) ||
    tokens.some((t) => typeof t !== "string" || !PRODUCT_TOKEN.test(t))
  ) {
    fail(
      where,
      `userAgents ${
        show(tokens)
      }: expected a list of user-agent product tokens, e.g. ["Googlebot", "Googlebot-Image"]`,
    );
  }
  return { operator, crawler, userAgents: tokens as string[] };
}

/** The npm package and version (null = newest) an `npm:` URL names. */
export function npmTarget(url: string): { name: string; version: string | null } {
  const spec = url.slice("npm:".length);
  const at = spec.indexOf("@", 1);
  return at === -1
    ? { name: spec, version: null }
    : { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

/** Whether a kind is compiled from lists. */
export function isFeedKind(kind: SourceKind): kind is typeof FEED_KINDS[number] {
  return (FEED_KINDS as readonly string[]).includes(kind);
}

/** Fails on the first field not in `known`, with the nearest known one. */
function unknownFields(
  object: Record<string, unknown>,
  known: readonly string[],
  where: string,
  fail: (where: string, message: string) => never,
): void {
  for (const field of Object.keys(object)) {
    if (known.includes(field)) continue;
    fail(
      where,
      `unknown field ${show(field)}${didYouMean(field, known)}; expected ${known.join(", ")}`,
    );
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Where a source is: an http(s) URL as given, a `file://` URL (of this
 * machine) normalised, or a plain path resolved against `baseDir` and turned
 * into a `file://` URL. Null for anything else (another scheme, a file URL
 * naming another host).
 */
export function sourceLocation(value: string, baseDir: string): string | null {
  // A scheme has two letters at least: `C:\feeds` is a Windows path, not a URL.
  if (/^[a-z][a-z0-9+.-]+:/i.test(value) && !isAbsolute(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return null;
    }
    if (url.protocol === "http:" || url.protocol === "https:") return value;
    if (url.protocol !== "file:" || (url.hostname !== "" && url.hostname !== "localhost")) {
      return null;
    }
    return url.pathname.length > 1 ? `file://${url.pathname}` : null;
  }
  return pathToFileURL(resolve(baseDir, value)).href;
}

/** Whether a source's URL names a file on this machine. */
export function isFileUrl(url: string): boolean {
  return url.startsWith("file:");
}

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== "string") return false;
  try {
    const url = new URL(v);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function show(v: unknown): string {
  const text = typeof v === "string" || (typeof v === "object" && v !== null)
    ? JSON.stringify(v)
    : v === undefined
    ? "(missing)"
    : String(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
