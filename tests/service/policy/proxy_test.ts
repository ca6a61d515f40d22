/**
 * The acceptance, behind real proxies: Debian's nginx (auth_request)
 * and Caddy (forward_auth) in front of a static page, `ipintel serve` (two
 * workers, a key required) behind them with a Tor list and the policy
 * (office = one Tor exit's /32, embargo = US). The proxies run the
 * configurations of docs/forward-auth.md, read from the file, so the
 * documentation is what is tested. Ignored, with the reason in the name, when
 * the proxy is not installed (.ci/run installs both).
 */

import assert from "node:assert/strict";
import { runCli } from "../../_cli.ts";
import { defaultDataFile } from "../../_helpers.ts";
import { fetchFresh, type ServeProcess, startServe } from "../../_serve_process.ts";
import { CRAWLER_GATE_FEEDS, type GateFeed, writeGateDataDir } from "./_gate_data.ts";

const DOC = await Deno.readTextFile(new URL("../../../docs/forward-auth.md", import.meta.url));

/** The documentation's one code block in `lang`. */
function docBlock(lang: string): string {
  const match = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(DOC);
  if (!match) throw new Error(`docs/forward-auth.md has no ${lang} block`);
  return match[1]!;
}

/** `text` with each [from, to] replaced; every `from` must occur (the doc changed otherwise). */
function substitute(text: string, pairs: [string, string][]): string {
  for (const [from, to] of pairs) {
    assert.ok(text.includes(from), `docs/forward-auth.md no longer has ${JSON.stringify(from)}`);
    text = text.replaceAll(from, to);
  }
  return text;
}

async function output(command: string, args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" })
      .output();
    const decoder = new TextDecoder();
    return out.success ? decoder.decode(out.stdout) + decoder.decode(out.stderr) : null;
  } catch {
    return null; // not installed
  }
}

const NGINX = (await output("nginx", ["-V"]))?.includes("--with-http_auth_request_module") ?? false;
const CADDY = (await output("caddy", ["version"])) !== null;

const POLICY = (embargo: string) =>
  JSON.stringify({
    default: "allow",
    rules: [
      { name: "office", action: "allow", cidr: ["185.220.101.4/32"] },
      { name: "no-tor", action: "deny", security: ["tor"] },
      { name: "embargo", action: "deny", country: [embargo] },
      { name: "watch", action: "report", security: ["vpn", "hosting"] },
    ],
  });

const PAGE = "<!doctype html><title>behind the gate</title><p>static page</p>\n";

/** A port free now (the proxies need one in their configuration). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

interface Gate {
  dir: string;
  ipintel: ServeProcess;
  key: string;
  policyPath: string;
  www: string;
}

/**
 * ipintel with the gate's data (the installed City and ASN databases when
 * built, else the fixtures, which place these addresses alike), a Tor list,
 * the policy embargoing the US, and one key (so keys are required).
 */
async function startGate(
  options: { feeds?: GateFeed[]; policy?: string; ownData?: boolean } = {},
): Promise<Gate> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-proxy-" });
  // The proxies' workers may run as another user (nginx started as root): let them in.
  await Deno.chmod(dir, 0o755);
  const dataDir = await writeGateDataDir(options.feeds);
  await Deno.rename(dataDir, `${dir}/data`);
  const policyPath = `${dir}/policy.json`;
  await Deno.writeTextFile(policyPath, options.policy ?? POLICY("US"));
  await Deno.writeTextFile(`${dir}/sources.json`, JSON.stringify({ sources: [] }));
  const www = `${dir}/www`;
  await Deno.mkdir(www, { mode: 0o755 });
  await Deno.writeTextFile(`${www}/index.html`, PAGE);
  await Deno.chmod(`${www}/index.html`, 0o644);
  const env: Record<string, string> = {
    IPINTEL_DATA_DIR: `${dir}/data`,
    IPINTEL_SOURCES: `${dir}/sources.json`,
    IPINTEL_KV: `${dir}/ipintel.kv`,
    IPINTEL_POLICY: policyPath,
    IPINTEL_TRUSTED_PROXIES: "127.0.0.1",
  };
  try {
    if (!options.ownData) {
      env.IPINTEL_CITY_DB = defaultDataFile("city");
      env.IPINTEL_ASN_DB = defaultDataFile("asn");
    }
  } catch { /* not built: the fixtures answer */ }
  const created = await runCli(
    ["keys", "create", "--name", "edge-proxy", "--limit", "0", "--json"],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const key = JSON.parse(created.stdout).key as string;
  const ipintel = await startServe(env);
  return { dir, ipintel, key, policyPath, www };
}

async function stopGate(gate: Gate) {
  await gate.ipintel.stop();
  await Deno.remove(gate.dir, { recursive: true });
}

/** Polls `ready` (an async check) every 100 ms until it holds, or throws after `timeoutMs`. */
async function until(ready: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!await ready()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The acceptance scenario through a proxy listening at `base`; returns the decisions asked for. */
async function acceptance(base: string, gate: Gate): Promise<number> {
  let decisions = 0;
  const visit = async (client: string) => {
    decisions++;
    const response = await fetchFresh(`${base}/`, { headers: { "x-forwarded-for": client } });
    const header = (name: string) => response.headers.get(name);
    return {
      status: response.status,
      rule: header("x-ip-policy-rule"),
      country: header("x-ip-country"),
      risk: header("x-ip-risk") ?? "",
      body: await response.text(),
    };
  };
  const google = await visit("8.8.8.8");
  assert.deepEqual([google.status, google.rule, google.country], [403, "embargo", "US"]);
  const gb = await visit("81.2.69.160");
  assert.deepEqual([gb.status, gb.rule, gb.country], [200, "default", "GB"]);
  assert.equal(gb.body, PAGE);
  const tor = await visit("185.220.101.34");
  assert.deepEqual([tor.status, tor.rule], [403, "no-tor"]);
  assert.match(tor.risk, /\btor\b/);
  const office = await visit("185.220.101.4");
  assert.deepEqual([office.status, office.rule], [200, "office"]);
  assert.equal(office.body, PAGE);

  // The policy rewritten to embargo GB instead: both flip without a restart.
  await Deno.writeTextFile(`${gate.policyPath}.next`, POLICY("GB"));
  await Deno.rename(`${gate.policyPath}.next`, gate.policyPath);
  // Served by every isolate of ipintel (each reads the file): five rounds in a row agree,
  // each visit on a fresh connection (spread over the isolates).
  let agreeing = 0;
  await until(
    async () => {
      const flipped = (await visit("8.8.8.8")).status === 200 &&
        (await visit("81.2.69.160")).status === 403;
      agreeing = flipped ? agreeing + 1 : 0;
      return agreeing === 5;
    },
    15_000,
    "the GB embargo to be served",
  );
  const flipped = await visit("81.2.69.160");
  assert.deepEqual([flipped.status, flipped.rule, flipped.country], [403, "embargo", "GB"]);
  return decisions;
}

/** The decisions ipintel counted (summed over rules and its worker isolates). */
async function countedDecisions(gate: Gate): Promise<number> {
  const metrics = await (await fetchFresh(`http://127.0.0.1:${gate.ipintel.port}/metrics`)).text();
  return [...metrics.matchAll(/^ipintel_policy_decisions_total\{[^}]*\} (\d+)$/gm)]
    .reduce((sum, match) => sum + Number(match[1]), 0);
}

/** The proxy's key matters: asked directly, without it, ipintel refuses. */
async function keyRequired(gate: Gate) {
  const direct = await fetchFresh(`http://127.0.0.1:${gate.ipintel.port}/auth`);
  assert.equal(direct.status, 401);
}

/** A proxy started on the documented configuration, in front of `upstream` (ipintel's port). */
interface Proxy {
  port: number;
  /** What the proxy logged (for a failure's message). */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** Polls until something listens on `port`. */
function listening(port: number, what: string) {
  return until(
    async () => {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        return true;
      } catch {
        return false;
      }
    },
    10_000,
    what,
  );
}

/** nginx with docs/forward-auth.md's block, files and temp paths in `dir`. */
async function startNginx(dir: string, www: string, upstream: number, key: string): Promise<Proxy> {
  const port = freePort();
  const conf = substitute(docBlock("nginx"), [
    ["listen 80;", `listen 127.0.0.1:${port};`],
    ["set_real_ip_from 10.0.0.0/8;", "set_real_ip_from 127.0.0.1;"],
    ["/var/www/html", www],
    ["/var/cache/nginx/ipintel", `${dir}/nginx-cache`],
    ["127.0.0.1:8000", `127.0.0.1:${upstream}`],
    ["YOUR_PROXY_KEY", key],
  ]);
  const temp = (name: string) => `${name}_temp_path ${dir}/nginx-${name};`;
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    [
      "daemon off;",
      "worker_processes 1;",
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/nginx-error.log;`,
      "events {}",
      "http {",
      "access_log off;",
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(temp),
      conf,
      "}",
    ].join("\n"),
  );
  const nginx = new Deno.Command("nginx", {
    args: ["-e", `${dir}/nginx-error.log`, "-p", dir, "-c", `${dir}/nginx.conf`],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const errors = nginx.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const proxy: Proxy = {
    port,
    log: () => Deno.readTextFile(`${dir}/nginx-error.log`).catch(() => ""),
    stop: async () => {
      nginx.kill("SIGTERM");
      await nginx.status;
      await errors.cancel();
    },
  };
  try {
    await listening(port, "nginx to listen");
  } catch (error) {
    const log = await proxy.log();
    await proxy.stop();
    throw new Error(`${(error as Error).message}\nnginx error log:\n${log}`, { cause: error });
  }
  return proxy;
}

/** Caddy with docs/forward-auth.md's block, its state in `dir`. */
async function startCaddy(dir: string, www: string, upstream: number, key: string): Promise<Proxy> {
  const port = freePort();
  const site = substitute(docBlock("caddyfile"), [
    ["example.com {", `http://127.0.0.1:${port} {`],
    ["# trusted_proxies 10.0.0.0/8", "trusted_proxies 127.0.0.1/32"],
    ["/var/www/html", www],
    ["127.0.0.1:8000", `127.0.0.1:${upstream}`],
    ["YOUR_PROXY_KEY", key],
  ]);
  await Deno.writeTextFile(`${dir}/Caddyfile`, `{\n\tadmin off\n\tauto_https off\n}\n${site}`);
  const caddy = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/Caddyfile`, "--adapter", "caddyfile"],
    env: { XDG_CONFIG_HOME: `${dir}/caddy-config`, XDG_DATA_HOME: `${dir}/caddy-data` },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let log = "";
  const reading = (async () => {
    for await (const text of caddy.stderr.pipeThrough(new TextDecoderStream())) log += text;
  })();
  const proxy: Proxy = {
    port,
    log: () => Promise.resolve(log),
    stop: async () => {
      caddy.kill("SIGTERM");
      await caddy.status;
      await reading;
    },
  };
  try {
    await listening(port, "caddy to listen");
  } catch (error) {
    await proxy.stop();
    throw new Error(`${(error as Error).message}\ncaddy log:\n${log}`, { cause: error });
  }
  return proxy;
}

/** docs/forward-auth.md's crawler recipe. */
const CRAWLER_POLICY = JSON.stringify({
  default: "allow",
  rules: [
    { name: "real-crawlers", action: "allow", security: ["crawler"] },
    { name: "fake-crawlers", action: "deny", security: ["fake-crawler"] },
    { name: "no-hosting", action: "deny", security: ["hosting"] },
  ],
});

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BROWSER =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

/**
 * Crawlers through a proxy at `base` (the proxy passes the client's User-Agent): the
 * real Googlebot in X4BNet's data-centre block is let in before the hosting rule, the
 * same user agent from AWS is denied as a fake, and a browser on AWS is a hosting address.
 * `allowedRisk`: whether the proxy shows X-IP-Risk on an allowed page (the documented
 * Caddy configuration copies only the country and the rule to the client).
 */
async function crawlerAcceptance(base: string, allowedRisk: boolean) {
  const visit = async (client: string, userAgent: string) => {
    const response = await fetchFresh(`${base}/`, {
      headers: { "x-forwarded-for": client, "user-agent": userAgent },
    });
    await response.body?.cancel();
    return [
      response.status,
      response.headers.get("x-ip-policy-rule"),
      response.headers.get("x-ip-risk"),
    ];
  };
  const shown = (risk: string) => allowedRisk ? risk : null;
  // Twice each, alternating: a cached answer of one is never another's.
  for (let round = 0; round < 2; round++) {
    assert.deepEqual(await visit("66.249.66.1", GOOGLEBOT), [
      200,
      "real-crawlers",
      shown("hosting,crawler:Googlebot"),
    ]);
    assert.deepEqual(await visit("3.5.140.1", GOOGLEBOT), [
      403,
      "fake-crawlers",
      "hosting,fake-crawler:Googlebot",
    ]);
    assert.deepEqual(await visit("3.5.140.1", BROWSER), [403, "no-hosting", "hosting"]);
    assert.deepEqual(await visit("157.55.39.1", "bingbot/2.0"), [
      200,
      "real-crawlers",
      shown("hosting,crawler:bingbot"),
    ]);
    // The real crawler's address with a browser's user agent is still the crawler's.
    assert.deepEqual(await visit("66.249.66.1", BROWSER), [
      200,
      "real-crawlers",
      shown("hosting,crawler:Googlebot"),
    ]);
  }
}

const PROXIES = {
  nginx: { installed: NGINX, start: startNginx, install: "nginx with auth_request" },
  Caddy: { installed: CADDY, start: startCaddy, install: "caddy" },
};

for (const [name, proxy] of Object.entries(PROXIES)) {
  const how = name === "nginx" ? "auth_request" : "forward_auth";
  Deno.test({
    name: proxy.installed
      ? `${name} ${how} in front of a static page: the acceptance, with the documented configuration`
      : `${name} ${how} in front of a static page: IGNORED, ${proxy.install} is not installed (apt-get install ${name.toLowerCase()})`,
    ignore: !proxy.installed,
    fn: async () => {
      const gate = await startGate();
      let running: Proxy | null = null;
      try {
        running = await proxy.start(gate.dir, gate.www, gate.ipintel.port, gate.key);
        const decisions = await acceptance(`http://127.0.0.1:${running.port}`, gate);
        // Every page view was one decision (no double charge from an index redirect), counted
        // by whichever of ipintel's two workers answered it.
        assert.equal(await countedDecisions(gate), decisions);
        await keyRequired(gate);
      } catch (error) {
        const log = (await running?.log()) ?? "";
        throw new Error(`${(error as Error).message}\n${name} log:\n${log}`, { cause: error });
      } finally {
        await running?.stop();
        await stopGate(gate);
      }
    },
  });

  Deno.test({
    name: proxy.installed
      ? `${name}: a hung ipintel fails closed within seconds (the documented timeouts), not a minute`
      : `${name}: a hung ipintel fails closed: IGNORED, ${proxy.install} is not installed`,
    ignore: !proxy.installed,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "ipintel-proxy-hung-" });
      await Deno.chmod(dir, 0o755);
      const www = `${dir}/www`;
      await Deno.mkdir(www, { mode: 0o755 });
      await Deno.writeTextFile(`${www}/index.html`, PAGE);
      await Deno.chmod(`${www}/index.html`, 0o644);
      // ipintel hung: it accepts connections and never answers.
      const hung = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const held: Deno.Conn[] = [];
      const accepting = (async () => {
        for await (const conn of hung) held.push(conn);
      })();
      let running: Proxy | null = null;
      try {
        running = await proxy.start(dir, www, (hung.addr as Deno.NetAddr).port, "k");
        const started = performance.now();
        const response = await fetchFresh(`http://127.0.0.1:${running.port}/`, {
          signal: AbortSignal.timeout(30_000),
        });
        const seconds = (performance.now() - started) / 1000;
        const body = await response.text();
        assert.ok(response.status >= 500, `${name}: ${response.status}`);
        assert.ok(!body.includes("static page"), `${name}: the page was served`);
        assert.ok(seconds >= 4 && seconds < 10, `${name}: failed closed after ${seconds} s`);
      } catch (error) {
        const log = (await running?.log()) ?? "";
        throw new Error(`${(error as Error).message}\n${name} log:\n${log}`, { cause: error });
      } finally {
        await running?.stop();
        hung.close();
        await accepting.catch(() => {});
        for (const conn of held) conn.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

for (const [name, proxy] of Object.entries(PROXIES)) {
  const how = name === "nginx" ? "auth_request" : "forward_auth";
  Deno.test({
    name: proxy.installed
      ? `${name} ${how}: real crawlers in before a hosting rule, fakes denied (the documented recipe)`
      : `${name} ${how}: crawlers: IGNORED, ${proxy.install} is not installed`,
    ignore: !proxy.installed,
    fn: async () => {
      const gate = await startGate({
        feeds: CRAWLER_GATE_FEEDS,
        policy: CRAWLER_POLICY,
        ownData: true,
      });
      let running: Proxy | null = null;
      try {
        running = await proxy.start(gate.dir, gate.www, gate.ipintel.port, gate.key);
        await crawlerAcceptance(`http://127.0.0.1:${running.port}`, name === "nginx");
      } catch (error) {
        const log = (await running?.log()) ?? "";
        throw new Error(`${(error as Error).message}\n${name} log:\n${log}`, { cause: error });
      } finally {
        await running?.stop();
        await stopGate(gate);
      }
    },
  });
}
