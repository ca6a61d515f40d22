import assert from "node:assert/strict";
import { ConfigError, loadConfig, OPTIONS } from "../../../src/base/config.ts";
import { FILE_CHECKS } from "../../../src/process/server/data_dir.ts";

const dataDir = await Deno.makeTempDir({ prefix: "ipintel-config-" });
const aFile = `${dataDir}/file.txt`;
await Deno.writeTextFile(aFile, "not a directory");
// The temp dir is removed when the process ends; keep the test self-contained.
globalThis.addEventListener("unload", () => Deno.removeSync(dataDir, { recursive: true }));

Deno.test("loadConfig gives the documented defaults with an empty environment", () => {
  const config = loadConfig({});
  assert.equal(config.host, "127.0.0.1", "loopback: an open API is not exposed by default");
  assert.equal(config.port, 8000);
  assert.equal(config.bulkMax, 1000);
  assert.deepEqual(config.trustedProxies, []);
  assert.equal(config.forwardedHeader, "x-forwarded-for");
  assert.deepEqual(config.corsOrigins, ["*"]);
  assert.equal(config.registry, "https://registry.npmjs.org");
  assert.equal(config.cacheSize, 100_000);
  assert.equal(config.httpServer, "deno");
  assert.equal(
    config.workers,
    Deno.build.os === "linux" ? navigator.hardwareConcurrency : 1,
    "one worker per CPU on Linux",
  );
  assert.equal(config.kv, null, "ipintel.kv beside the data directory");
  assert.equal(config.auth, "auto");
  assert.deepEqual([config.rateLimit, config.rateWindow, config.anonRateLimit], [1000, 60, 60]);
  assert.equal(config.metrics, true, "requests counted, /metrics served");
  assert.equal(config.metricsToken, null, "metrics open");
  assert.equal(config.log, "errors", "access log lines for 4xx and 5xx only");
  assert.equal(config.logFullIp, false, "client addresses truncated");
  assert.equal(config.shutdownTimeout, 10);
  assert.ok(config.dataDir.endsWith("/data"), config.dataDir);
  assert.ok(Object.isFrozen(config));
});

Deno.test("loadConfig reads every variable, and a flag wins over its variable", () => {
  const env = {
    HOST: "0.0.0.0",
    PORT: "9000",
    IPINTEL_DATA_DIR: dataDir,
    IPINTEL_BULK_MAX: "50",
    IPINTEL_TRUSTED_PROXIES: " 10.0.0.0/8 , 2001:db8::/32,192.0.2.7 ",
    IPINTEL_FORWARDED_HEADER: "Forwarded",
    IPINTEL_CORS_ORIGINS: "https://app.example,http://localhost:3000",
    IPINTEL_NPM_REGISTRY: "https://npm.example/",
    IPINTEL_CACHE_SIZE: "10",
    IPINTEL_ANSWER_CACHE: "0",
    IPINTEL_HTTP_SERVER: "NODE",
    IPINTEL_WORKERS: "3",
    IPINTEL_KV: ":memory:",
    IPINTEL_AUTH: "Optional",
    IPINTEL_RATE_LIMIT: "0",
    IPINTEL_RATE_WINDOW: "3600",
    IPINTEL_ANON_RATE_LIMIT: "10",
    IPINTEL_METRICS: "false",
    IPINTEL_METRICS_TOKEN: "s3cret-metrics-token",
    IPINTEL_LOG: "ON",
    IPINTEL_LOG_FULL_IP: "true",
    IPINTEL_SHUTDOWN_TIMEOUT: "30",
    IPINTEL_TLS_CERT: "/etc/ipintel/cert.pem",
    IPINTEL_TLS_KEY: "/etc/ipintel/key.pem",
    IPINTEL_HISTORY_DAYS: "90",
    IPINTEL_POLICY: "/etc/ipintel/policy.json",
    IPINTEL_STATUS_DETAIL: "true",
    IPINTEL_MCP: "off",
  };
  const config = loadConfig(env);
  assert.deepEqual({ ...config }, {
    host: "0.0.0.0",
    port: 9000,
    dataDir,
    bulkMax: 50,
    trustedProxies: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"],
    forwardedHeader: "forwarded",
    corsOrigins: ["https://app.example", "http://localhost:3000"],
    registry: "https://npm.example",
    cacheSize: 10,
    answerCache: 0,
    httpServer: "node",
    workers: 3,
    kv: ":memory:",
    auth: "optional",
    rateLimit: 0,
    rateWindow: 3600,
    anonRateLimit: 10,
    sourcesFile: loadConfig({}).sourcesFile,
    updateInterval: 86_400, // daily unless IPINTEL_UPDATE_INTERVAL says otherwise
    updateTimeout: 30,
    maxmindAccountId: null,
    maxmindLicenseKey: null,
    cityDb: null,
    asnDb: null,
    ispDb: null,
    connectionTypeDb: null,
    anonymousIpDb: null,
    domainDb: null,
    metrics: false,
    metricsToken: "s3cret-metrics-token",
    log: "on",
    logFullIp: true,
    shutdownTimeout: 30,
    streamIdleTimeout: 60,
    web: true,
    mcp: false,
    tlsCert: "/etc/ipintel/cert.pem",
    tlsKey: "/etc/ipintel/key.pem",
    historyDays: 90,
    policy: "/etc/ipintel/policy.json",
    statusDetail: true,
  });
  const flagged = loadConfig(env, { port: "9001", "forwarded-header": "x-real-ip" });
  assert.equal(flagged.port, 9001);
  assert.equal(flagged.forwardedHeader, "x-real-ip");
  assert.equal(loadConfig({ PORT: "" }).port, 8000, "an empty variable counts as unset");
});

// Each invalid value stops start-up with one message naming the variable or
// flag, quoting the value, and saying what is accepted.
const INVALID: { env?: Record<string, string>; flags?: Record<string, string>; message: RegExp }[] =
  [
    {
      env: { PORT: "notaport" },
      message: /^Invalid PORT "notaport": expected an integer from 0 to 65535$/,
    },
    { env: { PORT: "65536" }, message: /PORT "65536".*0 to 65535/ },
    { flags: { port: "80x" }, message: /^Invalid --port "80x": expected an integer/ },
    {
      env: { IPINTEL_AUTH: "sometimes" },
      message: /IPINTEL_AUTH "sometimes".*required, optional, off/,
    },
    {
      env: { IPINTEL_RATE_LIMIT: "-1" },
      message: /IPINTEL_RATE_LIMIT "-1": expected an integer from 0/,
    },
    {
      env: { IPINTEL_RATE_WINDOW: "0" },
      message: /IPINTEL_RATE_WINDOW "0": expected an integer from 1/,
    },
    { flags: { kv: " " }, message: /--kv/ },
    {
      env: { IPINTEL_BULK_MAX: "-5" },
      message: /IPINTEL_BULK_MAX "-5": expected an integer from 1/,
    },
    { env: { IPINTEL_BULK_MAX: "0" }, message: /IPINTEL_BULK_MAX "0"/ },
    { env: { IPINTEL_CACHE_SIZE: "1e3" }, message: /IPINTEL_CACHE_SIZE "1e3"/ },
    {
      env: { IPINTEL_TRUSTED_PROXIES: "10.0.0.0/8,10.0.0.0/33" },
      message:
        /IPINTEL_TRUSTED_PROXIES "10\.0\.0\.0\/8,10\.0\.0\.0\/33": expected comma-separated CIDR blocks.*"10\.0\.0\.0\/33" is not one/,
    },
    { env: { IPINTEL_TRUSTED_PROXIES: "10.0.0/8" }, message: /"10\.0\.0\/8" is not one/ },
    { flags: { "trusted-proxies": "proxy.local" }, message: /--trusted-proxies "proxy\.local"/ },
    {
      env: { IPINTEL_FORWARDED_HEADER: "x-client-ip" },
      message:
        /IPINTEL_FORWARDED_HEADER "x-client-ip": expected one of x-forwarded-for, forwarded, x-real-ip/,
    },
    {
      env: { IPINTEL_WORKERS: "0" },
      message: /^Invalid IPINTEL_WORKERS "0": expected an integer from 1 to 256$/,
    },
    {
      env: { IPINTEL_HTTP_SERVER: "bun" },
      message: /IPINTEL_HTTP_SERVER "bun": expected one of deno, node/,
    },
    {
      env: { IPINTEL_DATA_DIR: `${dataDir}/missing` },
      message: /IPINTEL_DATA_DIR ".*\/missing": expected an existing directory.*does not exist/,
    },
    { flags: { "data-dir": aFile }, message: /--data-dir ".*file\.txt".*it is a file/ },
    {
      env: { IPINTEL_CORS_ORIGINS: "https://app.example/" },
      message: /IPINTEL_CORS_ORIGINS .*"https:\/\/app\.example\/" is not one/,
    },
    { env: { IPINTEL_CORS_ORIGINS: "," }, message: /IPINTEL_CORS_ORIGINS ","/ },
    {
      env: { IPINTEL_NPM_REGISTRY: "ftp://mirror" },
      message: /IPINTEL_NPM_REGISTRY "ftp:\/\/mirror": expected an http/,
    },
    { env: { HOST: "a b" }, message: /HOST "a b"/ },
    {
      env: { IPINTEL_LOG: "verbose" },
      message: /^Invalid IPINTEL_LOG "verbose": expected one of on, errors, off$/,
    },
    {
      env: { IPINTEL_LOG_FULL_IP: "maybe" },
      message: /^Invalid IPINTEL_LOG_FULL_IP "maybe": expected true or false$/,
    },
    {
      env: { IPINTEL_SHUTDOWN_TIMEOUT: "-1" },
      message: /^Invalid IPINTEL_SHUTDOWN_TIMEOUT "-1": expected an integer from 0 to 3600$/,
    },
    { flags: { "shutdown-timeout": "5s" }, message: /^Invalid --shutdown-timeout "5s"/ },
    // A secret is never echoed, even in the error that refuses it.
    {
      env: { IPINTEL_METRICS_TOKEN: "short secret" },
      message:
        /^Invalid IPINTEL_METRICS_TOKEN "<hidden>": expected 16 to 512 visible ASCII characters without spaces$/,
    },
  ];

Deno.test("loadConfig refuses each invalid value with a ConfigError naming it", () => {
  for (const { env = {}, flags = {}, message } of INVALID) {
    const label = JSON.stringify({ env, flags });
    assert.throws(() => loadConfig(env, flags, FILE_CHECKS), (error: Error) => {
      assert.ok(error instanceof ConfigError, `${label}: ${error}`);
      assert.match(error.message, message, label);
      return true;
    });
  }
});

Deno.test("every option has a distinct variable and flag, both listed in the table", () => {
  const envs = new Set(OPTIONS.map((o) => o.env));
  const flags = new Set(OPTIONS.map((o) => o.flag));
  assert.equal(envs.size, OPTIONS.length);
  assert.equal(flags.size, OPTIONS.length);
  for (const o of OPTIONS) assert.match(o.flag, /^[a-z][a-z-]*$/);
});

Deno.test("each setting's default, as --help prints it, is the README's default column and the value loadConfig gives", async () => {
  const { defaultText } = await import("../../../src/base/config.ts");
  const readme = await Deno.readTextFile(new URL("../../../README.md", import.meta.url));
  const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("## API"));
  const rows = section.split("\n").filter((line) => line.startsWith("| `"));
  const defaults = loadConfig({});
  for (const option of OPTIONS) {
    const row = rows.find((r) => r.startsWith(`| \`${option.env}\``));
    assert.ok(row, `no README row for ${option.env}`);
    const cell = row.split("|")[3]!.trim().replaceAll("`", "");
    assert.equal(defaultText(option), cell, `${option.env}: --help and the README's default`);
    const value: unknown = defaults[option.key];
    if (typeof value === "number" && option.key !== "updateInterval" && option.key !== "workers") {
      assert.equal(cell, String(value), `${option.env}: the README's default is the real one`);
    }
    if (typeof value === "boolean") assert.equal(cell, String(value), option.env);
  }
});
