/**
 * The settings: one frozen Config read from environment variables and
 * configuration flags, validated at once (a bad value stops start-up naming
 * the variable or flag, the value and what is accepted). A leaf: types and
 * pure validators only. The command-line parser is src/process/cli/flags.ts; checks
 * against the file system are passed in by the caller (src/process/server/data_dir.ts).
 */

import { join } from "node:path";
import denoJson from "../../deno.json" with { type: "json" };
import { parseCidr } from "./ip/cidr.ts";

/** The package version, from deno.json. */
export const VERSION: string = denoJson.version;

/** The forwarding headers a deployment can choose to believe (src/service/http/client_address.ts reads them). */
export const FORWARDED_HEADERS = ["x-forwarded-for", "forwarded", "x-real-ip"] as const;
export type ForwardedHeader = typeof FORWARDED_HEADERS[number];

/** Decoded records cached per database unless told otherwise (src/data/mmdb/reader.ts uses it too). */
export const DEFAULT_RECORD_CACHE_SIZE = 100_000;

/** Rendered answers of repeat `/ip` and `/me` requests kept per process (src/service/app/answer_cache.ts). */
export const DEFAULT_ANSWER_CACHE_SIZE = 10_000;

/** Seconds a streamed bulk answer may idle (IPINTEL_STREAM_IDLE_TIMEOUT's default). */
export const DEFAULT_STREAM_IDLE_TIMEOUT = 60;

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  bulkMax: number;
  /** CIDR texts, each validated here (the client-address resolver parses them again). */
  trustedProxies: readonly string[];
  /** The one forwarding header believed from trusted proxies. */
  forwardedHeader: ForwardedHeader;
  corsOrigins: readonly string[];
  registry: string;
  cacheSize: number;
  /** Rendered answers of repeat lookups kept per process (0: none). */
  answerCache: number;
  /** `deno`: Deno.serve (fastest; drops GET bodies). `node`: node:http (reads GET bodies). */
  httpServer: "deno" | "node";
  /** Request-serving isolates on one port (Deno.serve with reusePort); 1: the main one serves. */
  workers: number;
  /** Deno KV location (file path, `:memory:` or KV Connect URL); null: `ipintel.kv` beside the data directory. */
  kv: string | null;
  /** `auto`: `required` once any API key exists, `off` while none does. */
  auth: "required" | "optional" | "off" | "auto";
  rateLimit: number;
  rateWindow: number;
  anonRateLimit: number;
  /** The sources file `data update` installs from (and /status reports against). */
  sourcesFile: string;
  /** Seconds between scheduled updates in the server; 0 = never. */
  updateInterval: number;
  /** Seconds a download may go without receiving anything. */
  updateTimeout: number;
  maxmindAccountId: string | null;
  maxmindLicenseKey: string | null;
  /** Operators' own MaxMind DB files, each replacing the installed database of its kind. */
  cityDb: string | null;
  asnDb: string | null;
  ispDb: string | null;
  connectionTypeDb: string | null;
  anonymousIpDb: string | null;
  domainDb: string | null;
  /** Count requests and serve `/metrics`. */
  metrics: boolean;
  /** Bearer token `GET /metrics` requires; null: metrics are open. */
  metricsToken: string | null;
  /** Access log lines on stdout: every request, only 4xx/5xx, or none. */
  log: "on" | "errors" | "off";
  /** Log full client addresses instead of their /24 (IPv4) or /48 (IPv6). */
  logFullIp: boolean;
  /** Seconds a stopping server waits for requests in flight. */
  shutdownTimeout: number;
  /** Seconds a streamed bulk answer may go without reading or writing a byte; 0 = never ends for that. */
  streamIdleTimeout: number;
  /** The lookup page for browsers at `/` (off: `/` answers like `/me` for everyone). */
  web: boolean;
  /** The MCP server for AI assistants at `/mcp` (off: `/mcp` answers 404). */
  mcp: boolean;
  /** PEM certificate chain and private key files: serve HTTPS (both or neither; see src/process/server/tls.ts). */
  tlsCert: string | null;
  tlsKey: string | null;
  /** Days of security-list history kept (first/last seen, `at` answers); 0: none kept. */
  historyDays: number;
  /** The forward-auth policy file (JSON, src/service/policy); null: no `/auth` gate. */
  policy: string | null;
  /** `/status` shows source URLs whole (secrets still redacted); off: scheme and host only. */
  statusDetail: boolean;
}

/** One setting: its environment variable, its flag, default and parser. */
export interface OptionSpec<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  description: string;
  fallback: () => Config[K];
  parse: (text: string, name: string) => Config[K];
}

// Relative to this module, so `deno compile --include data/` finds the embedded copy.
const DEFAULT_SOURCES_FILE = () => join(import.meta.dirname!, "..", "..", "data", "sources.json");
/**
 * The default data directory: `data/` relative to this module, so that
 * `deno run` and a binary built with `deno compile --include data/` read it
 * through the same code (in a binary it is the embedded, read-only copy).
 */
export const DEFAULT_DATA_DIR = (): string => join(import.meta.dirname!, "..", "..", "data");

/** True when the data directory is the data embedded in a compiled binary (read-only). */
export function isEmbeddedData(
  dataDir: string,
  standalone: boolean = Deno.build.standalone,
): boolean {
  return standalone && dataDir === DEFAULT_DATA_DIR();
}

/** Any one setting's spec, its key tied to its value's type. */
export type AnyOptionSpec = { [K in keyof Config]: OptionSpec<K> }[keyof Config];

/** Every setting, in the order the README's configuration table lists them. */
export const OPTIONS = [
  option(
    "host",
    "HOST",
    "host",
    "Address to listen on (0.0.0.0 or :: for every interface)",
    () => "127.0.0.1",
    hostName,
  ),
  option("port", "PORT", "port", "TCP port to listen on", () => 8000, integerIn(0, 65535)),
  option(
    "dataDir",
    "IPINTEL_DATA_DIR",
    "data-dir",
    "Directory holding manifest.json and the databases (must exist when set)",
    DEFAULT_DATA_DIR,
    directoryPath,
  ),
  option(
    "bulkMax",
    "IPINTEL_BULK_MAX",
    "bulk-max",
    "Most addresses in one bulk request",
    () => 1000,
    integerIn(1, 100_000),
  ),
  option(
    "trustedProxies",
    "IPINTEL_TRUSTED_PROXIES",
    "trusted-proxies",
    "Comma-separated CIDRs of proxies whose forwarding header is believed",
    () => [],
    cidrList,
  ),
  option(
    "forwardedHeader",
    "IPINTEL_FORWARDED_HEADER",
    "forwarded-header",
    "The header /me reads from trusted proxies: x-forwarded-for, forwarded or x-real-ip",
    () => "x-forwarded-for",
    oneOf(...FORWARDED_HEADERS),
  ),
  option(
    "corsOrigins",
    "IPINTEL_CORS_ORIGINS",
    "cors-origins",
    "Comma-separated origins allowed by CORS, or *",
    () => ["*"],
    originList,
  ),
  option(
    "registry",
    "IPINTEL_NPM_REGISTRY",
    "registry",
    "npm registry the data build downloads from",
    () => "https://registry.npmjs.org",
    httpUrl,
  ),
  option(
    "cacheSize",
    "IPINTEL_CACHE_SIZE",
    "cache-size",
    "Decoded database records kept in memory, per database",
    () => DEFAULT_RECORD_CACHE_SIZE,
    integerIn(1, 10_000_000),
  ),
  option(
    "answerCache",
    "IPINTEL_ANSWER_CACHE",
    "answer-cache",
    "Rendered /ip and /me answers kept for repeat requests, per process (at most 64 MB; 0: none)",
    () => DEFAULT_ANSWER_CACHE_SIZE,
    integerIn(0, 1_000_000),
  ),
  option(
    "httpServer",
    "IPINTEL_HTTP_SERVER",
    "http-server",
    "deno (Deno.serve, fastest) or node (node:http, also reads the JSON user-agent body on GET)",
    () => "deno",
    oneOf("deno", "node"),
  ),
  option(
    "workers",
    "IPINTEL_WORKERS",
    "workers",
    "Request-serving workers sharing one port and one copy of the data (always 1 with the node server); enrich's workers when set (else one isolate)",
    defaultWorkers,
    integerIn(1, 256),
  ),
  option(
    "kv",
    "IPINTEL_KV",
    "kv",
    "Deno KV for API keys and rate limits: a file path, :memory:, or a KV Connect URL (token in DENO_KV_ACCESS_TOKEN)",
    () => null,
    nonEmpty,
  ),
  option(
    "auth",
    "IPINTEL_AUTH",
    "auth",
    "API keys: required, optional (keyless callers get the anonymous limit) or off",
    () => "auto",
    oneOf("required", "optional", "off", "auto"),
  ),
  option(
    "rateLimit",
    "IPINTEL_RATE_LIMIT",
    "rate-limit",
    "Requests per window for an API key without its own limit (0: unlimited)",
    () => 1000,
    integerIn(0, 1_000_000_000),
  ),
  option(
    "rateWindow",
    "IPINTEL_RATE_WINDOW",
    "rate-window",
    "Sliding-window length in seconds, for keys without their own window and for keyless callers",
    () => 60,
    integerIn(1, 31 * 86_400),
  ),
  option(
    "anonRateLimit",
    "IPINTEL_ANON_RATE_LIMIT",
    "anon-rate-limit",
    "Requests per window for each keyless client address (IPv6 per /64) with IPINTEL_AUTH=optional (0: unlimited)",
    () => 60,
    integerIn(0, 1_000_000_000),
  ),
  option(
    "sourcesFile",
    "IPINTEL_SOURCES",
    "sources",
    "Sources file that `data update` installs (see data/sources.json)",
    DEFAULT_SOURCES_FILE,
    nonEmpty,
  ),
  option(
    "updateInterval",
    "IPINTEL_UPDATE_INTERVAL",
    "update-interval",
    "Run `data update` in the server this often (e.g. 6h, 30m, 1d; at least 1m), or off (no feed fetch, no schedule)",
    () => 86_400,
    duration(60),
  ),
  option(
    "updateTimeout",
    "IPINTEL_UPDATE_TIMEOUT",
    "update-timeout",
    "Seconds a download may receive nothing before it is abandoned (past them, also under 1 KB/s)",
    () => 30,
    integerIn(1, 3600),
  ),
  option(
    "maxmindAccountId",
    "IPINTEL_MAXMIND_ACCOUNT_ID",
    "maxmind-account-id",
    "MaxMind account id for tar.gz sources on download.maxmind.com",
    () => null,
    nonEmpty,
  ),
  option(
    "maxmindLicenseKey",
    "IPINTEL_MAXMIND_LICENSE_KEY",
    "maxmind-license-key",
    "MaxMind licence key (prefer the variable: flags show in process lists)",
    () => null,
    nonEmpty,
  ),
  ...(
    [
      ["cityDb", "CITY", "city", "City (GeoIP2/GeoLite2/DB-IP City or Country layout)"],
      ["asnDb", "ASN", "asn", "ASN (GeoLite2-ASN layout)"],
      ["ispDb", "ISP", "isp", "GeoIP2 ISP"],
      ["connectionTypeDb", "CONNECTION_TYPE", "connection-type", "GeoIP2 Connection-Type"],
      ["anonymousIpDb", "ANONYMOUS_IP", "anonymous-ip", "GeoIP2 Anonymous-IP"],
      ["domainDb", "DOMAIN", "domain", "GeoIP2 Domain"],
    ] as const
  ).map(([key, env, flag, what]) =>
    option(
      key,
      `IPINTEL_${env}_DB`,
      `${flag}-db`,
      `Your own ${what} MMDB file, used instead of the installed one`,
      () => null,
      nonEmpty,
    )
  ),
  option(
    "metrics",
    "IPINTEL_METRICS",
    "metrics",
    "true: count requests and serve GET /metrics; false: neither (no counting cost at all)",
    () => true,
    boolean,
  ),
  option(
    "metricsToken",
    "IPINTEL_METRICS_TOKEN",
    "metrics-token",
    "Bearer token GET /metrics requires (Authorization: Bearer <token>); metrics are open without it",
    () => null,
    token,
  ),
  option(
    "log",
    "IPINTEL_LOG",
    "log",
    "Access log, one JSON line per request on stdout: on (every request), errors (4xx and 5xx only) or off",
    () => "errors",
    oneOf("on", "errors", "off"),
  ),
  option(
    "logFullIp",
    "IPINTEL_LOG_FULL_IP",
    "log-full-ip",
    "true: log full client addresses; false: only their /24 (IPv4) or /48 (IPv6)",
    () => false,
    boolean,
  ),
  option(
    "shutdownTimeout",
    "IPINTEL_SHUTDOWN_TIMEOUT",
    "shutdown-timeout",
    "Seconds a stopping server (SIGTERM, SIGINT) waits for requests in flight",
    () => 10,
    integerIn(0, 3600),
  ),
  option(
    "streamIdleTimeout",
    "IPINTEL_STREAM_IDLE_TIMEOUT",
    "stream-idle-timeout",
    "Seconds a streamed bulk answer may go without reading a byte of its body or having one written; then it ends with its final record (0: never)",
    () => DEFAULT_STREAM_IDLE_TIMEOUT,
    integerIn(0, 86_400),
  ),
  option(
    "web",
    "IPINTEL_WEB",
    "web",
    "Serve the lookup page to browsers at / (true or false; false: / answers like /me)",
    () => true,
    boolean,
  ),
  option(
    "mcp",
    "IPINTEL_MCP",
    "mcp",
    "Serve the MCP server for AI assistants at /mcp, with the API's keys and limits (true or false)",
    () => true,
    boolean,
  ),
  option(
    "tlsCert",
    "IPINTEL_TLS_CERT",
    "tls-cert",
    "PEM certificate (chain) file: serve HTTPS (with --tls-key); reloaded when the file changes",
    () => null,
    nonEmpty,
  ),
  option(
    "tlsKey",
    "IPINTEL_TLS_KEY",
    "tls-key",
    "PEM private key file of --tls-cert; reloaded when the file changes",
    () => null,
    nonEmpty,
  ),
  option(
    "historyDays",
    "IPINTEL_HISTORY_DAYS",
    "history-days",
    "Days each update keeps of the security lists' history (first/last seen, ?at= answers); 0: none",
    () => 365,
    integerIn(0, 36_500),
  ),
  option(
    "policy",
    "IPINTEL_POLICY",
    "policy",
    "Policy file (JSON) of the forward-auth gate GET /auth; checked at start, reloaded when it changes",
    () => null,
    nonEmpty,
  ),
  option(
    "statusDetail",
    "IPINTEL_STATUS_DETAIL",
    "status-detail",
    "true: /status shows source URLs with their paths (secrets still redacted); false: scheme and host only",
    () => false,
    boolean,
  ),
] as const satisfies readonly AnyOptionSpec[];

/** Fails to compile while a key of Config has no entry in OPTIONS. */
const _EVERY_KEY_LISTED: Record<Exclude<keyof Config, typeof OPTIONS[number]["key"]>, never> = {};

/**
 * The defaults the README's configuration table (and `--help`) words rather
 * than prints: paths, a count per machine, one that depends on the keys.
 */
const DEFAULT_WORDING: { readonly [K in keyof Config]?: string } = {
  dataDir: "data/ next to the code",
  workers: "number of CPUs (Linux), else 1",
  kv: "ipintel.kv beside the data directory",
  auth: "required once a key exists, else off",
  sourcesFile: "data/sources.json",
  updateInterval: "1d",
  metricsToken: "none (open)",
  policy: "none (no gate)",
};

/**
 * A setting's default as the README's configuration table gives it (what
 * `--help` prints): its wording, else its value ("none" for no value).
 */
export function defaultText(spec: AnyOptionSpec): string {
  const wording = DEFAULT_WORDING[spec.key];
  if (wording !== undefined) return wording;
  const value: unknown = spec.fallback();
  if (value === null || (Array.isArray(value) && value.length === 0)) return "none";
  return Array.isArray(value) ? value.join(",") : String(value);
}

/** A configuration value that is not accepted; the CLI exits with status 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A command line that does not parse (unknown flag, missing value); exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A check of a set value beyond its parser (one that reads the file system); throws a ConfigError. */
export type SettingChecks = {
  readonly [K in keyof Config]?: (value: Config[K], name: string) => void;
};

/**
 * Builds the configuration from the environment and the configuration flags
 * (flags win). Every set value is validated (and given to its entry in
 * `checks`), so a misconfiguration stops start-up at once; throws a
 * ConfigError naming the variable or flag. Defaults are not checked.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  flags: Readonly<Record<string, string | undefined>> = {},
  checks: SettingChecks = {},
): Config {
  const setting = <K extends keyof Config>(spec: OptionSpec<K>): Config[K] => {
    const flagValue = flags[spec.flag];
    const envValue = env[spec.env];
    const name = flagValue !== undefined
      ? `--${spec.flag}`
      : envValue !== undefined && envValue !== ""
      ? spec.env
      : null;
    if (name === null) return spec.fallback();
    const value = spec.parse(flagValue ?? envValue!, name);
    checks[spec.key]?.(value, name);
    return value;
  };
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const spec of OPTIONS) config[spec.key] = setting(spec);
  if (!isConfig(config)) throw new Error("A setting has no entry in OPTIONS");
  return Object.freeze(config);
}

/** True when every key of Config has its value (OPTIONS lists each: _EVERY_KEY_LISTED). */
function isConfig(values: Partial<Record<keyof Config, unknown>>): values is Config {
  return OPTIONS.every((spec) => spec.key in values);
}

/** A flag a command declares for itself, beyond the configuration flags every command takes. */
export interface FlagSpec {
  type: "string" | "boolean";
  /** One-letter alias, e.g. `h` for `-h`. */
  short?: string;
  /** Placeholder shown in help for a string flag, e.g. `<n>`. */
  placeholder?: string;
  description: string;
}

/** A command's own flags, by long name (without `--`). */
export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** Parsed values of a flag table: strings for string flags, true for boolean flags given. */
export type FlagValues<F extends FlagTable> = {
  [K in keyof F]?: F[K]["type"] extends "boolean" ? boolean : string;
};

function option<K extends keyof Config>(
  key: K,
  env: string,
  flag: string,
  description: string,
  fallback: () => NoInfer<Config[K]>,
  parse: (text: string, name: string) => NoInfer<Config[K]>,
): OptionSpec<K> {
  return { key, env, flag, description, fallback, parse };
}

/** The error for a value that is not accepted, naming the variable or flag and what it takes. */
export function invalid(name: string, text: string, accepted: string): ConfigError {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new ConfigError(`Invalid ${name} ${JSON.stringify(shown)}: expected ${accepted}`);
}

function hostName(text: string, name: string): string {
  const host = text.trim();
  if (!/^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$/.test(host)) {
    throw invalid(name, text, "a host name or IP address to listen on, such as 0.0.0.0 or ::");
  }
  return host;
}

/** What IPINTEL_DATA_DIR accepts (src/process/server/data_dir.ts checks that it exists). */
export const DATA_DIR_ACCEPTED =
  "an existing directory (only the default data/ is created on first run)";

function directoryPath(text: string, name: string): string {
  if (text.trim() === "") throw invalid(name, text, DATA_DIR_ACCEPTED);
  return text.trim();
}

function nonEmpty(text: string, name: string): string {
  if (text.trim() === "") throw invalid(name, text, "a non-empty value");
  return text.trim();
}

function token(text: string, name: string): string {
  const value = text.trim();
  // A bearer token is one header value word: visible ASCII, no spaces.
  if (!/^[\x21-\x7e]{16,512}$/.test(value)) {
    throw invalid(name, "<hidden>", "16 to 512 visible ASCII characters without spaces");
  }
  return value;
}

/** A switch: true/false (also 1/0, yes/no, on/off). */
function boolean(text: string, name: string): boolean {
  const value = text.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(value)) return true;
  if (["false", "0", "no", "off"].includes(value)) return false;
  throw invalid(name, text, "true or false");
}

function list(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

function cidrList(text: string, name: string): string[] {
  const blocks = list(text);
  for (const block of blocks) {
    try {
      parseCidr(block);
    } catch {
      throw invalid(
        name,
        text,
        `comma-separated CIDR blocks such as 10.0.0.0/8,2001:db8::/32 (${
          JSON.stringify(block)
        } is not one)`,
      );
    }
  }
  return blocks;
}

function originList(text: string, name: string): string[] {
  const origins = list(text);
  for (const origin of origins) {
    if (origin === "*") continue;
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch { /* reported below */ }
    if (!parsed || parsed.origin !== origin) {
      throw invalid(
        name,
        text,
        `* or comma-separated origins such as https://app.example,http://localhost:3000 (${
          JSON.stringify(origin)
        } is not one)`,
      );
    }
  }
  if (origins.length === 0) throw invalid(name, text, "* or comma-separated origins");
  return origins;
}

function httpUrl(text: string, name: string): string {
  const url = text.trim().replace(/\/+$/, "");
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch { /* reported below */ }
  if (!parsed || !/^https?:$/.test(parsed.protocol)) {
    throw invalid(name, text, "an http:// or https:// URL such as https://registry.npmjs.org");
  }
  return url;
}

/** One per CPU where the kernel spreads connections over reusePort sockets (Linux). */
function defaultWorkers(): number {
  return Deno.build.os === "linux" ? Math.max(1, navigator.hardwareConcurrency || 1) : 1;
}

function integerIn(min: number, max: number) {
  return (text: string, name: string): number => {
    const value = Number(text.trim());
    if (!/^\d+$/.test(text.trim()) || value < min || value > max) {
      throw invalid(name, text, `an integer from ${min} to ${max}`);
    }
    return value;
  };
}

function oneOf<T extends string>(...values: readonly T[]) {
  return (text: string, name: string): T => {
    const value = text.trim().toLowerCase() as T;
    if (!values.includes(value)) throw invalid(name, text, `one of ${values.join(", ")}`);
    return value;
  };
}

/** A duration: seconds, or a number with s, m, h or d; 0 or "off" disables. */
function duration(minSeconds: number) {
  const units: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86400 };
  return (text: string, name: string): number => {
    const t = text.trim().toLowerCase();
    if (t === "off" || t === "0") return 0;
    const match = /^(\d{1,7})\s*([smhd]?)$/.exec(t);
    const seconds = match ? Number(match[1]) * units[match[2]!]! : NaN;
    if (!(seconds >= minSeconds && seconds <= 366 * 86400)) {
      throw invalid(
        name,
        text,
        `a duration such as 30m, 6h or 1d (at least ${minSeconds} s), or off`,
      );
    }
    return seconds;
  };
}
