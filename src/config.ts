/** The only reader of environment variables and command-line flags: one frozen Config. */

import { join } from "node:path";

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  bulkMax: number;
  /** CIDR texts; parsed and validated by the client-address resolver at start-up. */
  trustedProxies: readonly string[];
  corsOrigins: readonly string[];
  registry: string;
  cacheSize: number;
  /** `deno`: Deno.serve (fastest; drops GET bodies). `node`: node:http (reads GET bodies). */
  httpServer: "deno" | "node";
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
}

/** One setting: its environment variable, its flag, default and parser. */
interface OptionSpec<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  description: string;
  fallback: () => Config[K];
  parse: (text: string, name: string) => Config[K];
}

// Relative to this module, so `deno compile --include data/` finds the embedded copy.
const DEFAULT_DATA_DIR = () => join(import.meta.dirname!, "..", "data");
const DEFAULT_SOURCES_FILE = () => join(import.meta.dirname!, "..", "data", "sources.json");

/** Every setting, in the order the README's configuration table lists them. */
export const OPTIONS: readonly OptionSpec<keyof Config>[] = [
  option("host", "HOST", "host", "Address to listen on", () => "0.0.0.0", nonEmpty),
  option("port", "PORT", "port", "TCP port to listen on", () => 8000, integerIn(0, 65535)),
  option(
    "dataDir",
    "IPINTEL_DATA_DIR",
    "data-dir",
    "Directory holding manifest.json and the databases",
    DEFAULT_DATA_DIR,
    nonEmpty,
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
    "Comma-separated CIDRs of proxies whose X-Forwarded-For/Forwarded is believed (none by default)",
    () => [],
    list,
  ),
  option(
    "corsOrigins",
    "IPINTEL_CORS_ORIGINS",
    "cors-origins",
    "Comma-separated origins allowed by CORS, or *",
    () => ["*"],
    list,
  ),
  option(
    "registry",
    "IPINTEL_NPM_REGISTRY",
    "registry",
    "npm registry the data build downloads from",
    () => "https://registry.npmjs.org",
    nonEmpty,
  ),
  option(
    "cacheSize",
    "IPINTEL_CACHE_SIZE",
    "cache-size",
    "Decoded database records kept in memory, per database",
    () => 100_000,
    integerIn(1, 10_000_000),
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
    "Run `data update` in the server this often (e.g. 6h, 30m, 1d; at least 1m); off by default",
    () => 0,
    duration(60),
  ),
  option(
    "updateTimeout",
    "IPINTEL_UPDATE_TIMEOUT",
    "update-timeout",
    "Seconds a download may receive nothing before it is abandoned",
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
];

/**
 * Builds the configuration from the environment and `--flag value` /
 * `--flag=value` arguments (flags win). Throws naming the variable or flag.
 * Returns the config and the arguments that were not flags.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  args: readonly string[],
): { config: Config; rest: string[] } {
  const { flags, rest } = splitFlags(args);
  const values: Record<string, unknown> = {};
  for (const spec of OPTIONS) {
    const flagValue = flags.get(spec.flag);
    flags.delete(spec.flag);
    const envValue = env[spec.env];
    if (flagValue !== undefined) values[spec.key] = spec.parse(flagValue, `--${spec.flag}`);
    else if (envValue !== undefined && envValue !== "") {
      values[spec.key] = spec.parse(envValue, spec.env);
    } else values[spec.key] = spec.fallback();
  }
  const unknown = [...flags.keys()];
  if (unknown.length) {
    throw new Error(`Unknown option --${unknown[0]}: valid options are ${flagList()}`);
  }
  return { config: Object.freeze(values as unknown as Config), rest };
}

function flagList(): string {
  return OPTIONS.map((o) => `--${o.flag}`).join(", ");
}

/** Splits `--name value`, `--name=value` pairs from positional arguments. */
function splitFlags(args: readonly string[]) {
  const flags = new Map<string, string>();
  const rest: string[] = [];
  const known = new Set(OPTIONS.map((o) => o.flag));
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(arg);
    if (!match || !known.has(match[1]!)) {
      rest.push(arg);
      continue;
    }
    const value = match[2] ?? args[++i];
    if (value === undefined) throw new Error(`Option --${match[1]} needs a value`);
    flags.set(match[1]!, value);
  }
  return { flags, rest };
}

function option<K extends keyof Config>(
  key: K,
  env: string,
  flag: string,
  description: string,
  fallback: () => Config[K],
  parse: (text: string, name: string) => unknown,
): OptionSpec<keyof Config> {
  return { key, env, flag, description, fallback, parse } as unknown as OptionSpec<keyof Config>;
}

function nonEmpty(text: string, name: string): string {
  if (text.trim() === "") throw new Error(`Invalid ${name}: must not be empty`);
  return text.trim();
}

function list(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

function integerIn(min: number, max: number) {
  return (text: string, name: string): number => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || value < min || value > max) {
      throw new Error(`Invalid ${name} "${text}": expected an integer from ${min} to ${max}`);
    }
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
      throw new Error(
        `Invalid ${name} "${text}": expected a duration such as 30m, 6h or 1d (at least ${minSeconds} s), or off`,
      );
    }
    return seconds;
  };
}

function oneOf<T extends string>(...values: T[]) {
  return (text: string, name: string): T => {
    const value = text.trim().toLowerCase() as T;
    if (!values.includes(value)) {
      throw new Error(`Invalid ${name} "${text}": expected one of ${values.join(", ")}`);
    }
    return value;
  };
}
