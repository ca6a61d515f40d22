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
  /** Deno KV location (file path, `:memory:` or KV Connect URL); null: `ipintel.kv` beside the data directory. */
  kv: string | null;
  /** `auto`: `required` once any API key exists, `off` while none does. */
  auth: "required" | "optional" | "off" | "auto";
  rateLimit: number;
  rateWindow: number;
  anonRateLimit: number;
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

/** Every setting, in the order the README's configuration table lists them. */
export const OPTIONS: readonly OptionSpec<keyof Config>[] = [
  option(
    "host",
    "HOST",
    "host",
    "Address to listen on (0.0.0.0 or :: for every interface)",
    () => "127.0.0.1",
    nonEmpty,
  ),
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
    "kv",
    "IPINTEL_KV",
    "kv",
    "Deno KV for API keys and rate limits: a file path, :memory:, or a KV Connect URL (token in DENO_KV_ACCESS_TOKEN); default ipintel.kv beside the data directory",
    () => null,
    nonEmpty,
  ),
  option(
    "auth",
    "IPINTEL_AUTH",
    "auth",
    "API keys: required, optional (keyless callers get the anonymous limit) or off; default required once a key exists, off while none does",
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

function oneOf<T extends string>(...values: T[]) {
  return (text: string, name: string): T => {
    const value = text.trim().toLowerCase() as T;
    if (!values.includes(value)) {
      throw new Error(`Invalid ${name} "${text}": expected one of ${values.join(", ")}`);
    }
    return value;
  };
}
