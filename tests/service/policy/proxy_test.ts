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
import { writeGateDataDir } from "./_gate_data.ts";

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
async function startGate(): Promise<Gate> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-proxy-" });
  // The proxies' workers may run as another user (nginx started as root): let them in.
  await Deno.chmod(dir, 0o755);
  const dataDir = await writeGateDataDir();
  await Deno.rename(dataDir, `${dir}/data`);
  const policyPath = `${dir}/policy.json`;
  await Deno.writeTextFile(policyPath, POLICY("US"));
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
    env.IPINTEL_CITY_DB = defaultDataFile("city");
    env.IPINTEL_ASN_DB = defaultDataFile("asn");
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

Deno.test({
  name: NGINX
    ? "nginx auth_request in front of a static page: the acceptance, with the documented configuration"
    : "nginx auth_request in front of a static page: IGNORED, nginx with auth_request is not installed (apt-get install nginx)",
  ignore: !NGINX,
  fn: async () => {
    const gate = await startGate();
    const port = freePort();
    const conf = substitute(docBlock("nginx"), [
      ["listen 80;", `listen 127.0.0.1:${port};`],
      ["set_real_ip_from 10.0.0.0/8;", "set_real_ip_from 127.0.0.1;"],
      ["/var/www/html", gate.www],
      ["/var/cache/nginx/ipintel", `${gate.dir}/nginx-cache`],
      ["127.0.0.1:8000", `127.0.0.1:${gate.ipintel.port}`],
      ["YOUR_PROXY_KEY", gate.key],
    ]);
    const temp = (name: string) => `${name}_temp_path ${gate.dir}/nginx-${name};`;
    await Deno.writeTextFile(
      `${gate.dir}/nginx.conf`,
      [
        "daemon off;",
        "worker_processes 1;",
        `pid ${gate.dir}/nginx.pid;`,
        `error_log ${gate.dir}/nginx-error.log;`,
        "events {}",
        "http {",
        "access_log off;",
        ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(temp),
        conf,
        "}",
      ].join("\n"),
    );
    const nginx = new Deno.Command("nginx", {
      args: ["-e", `${gate.dir}/nginx-error.log`, "-p", gate.dir, "-c", `${gate.dir}/nginx.conf`],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const errors = nginx.stderr.pipeThrough(new TextDecoderStream()).getReader();
    try {
      await until(
        async () => {
          try {
            (await Deno.connect({ hostname: "127.0.0.1", port })).close();
            return true;
          } catch {
            return false;
          }
        },
        10_000,
        "nginx to listen",
      );
      const decisions = await acceptance(`http://127.0.0.1:${port}`, gate);
      // Every page view was one decision (no double charge from an index redirect), counted
      // by whichever of ipintel's two workers answered it.
      assert.equal(await countedDecisions(gate), decisions);
      await keyRequired(gate);
    } catch (error) {
      const log = await Deno.readTextFile(`${gate.dir}/nginx-error.log`).catch(() => "");
      throw new Error(`${(error as Error).message}\nnginx error log:\n${log}`, { cause: error });
    } finally {
      nginx.kill("SIGTERM");
      await nginx.status;
      await errors.cancel();
      await stopGate(gate);
    }
  },
});

Deno.test({
  name: CADDY
    ? "Caddy forward_auth in front of a static page: the acceptance, with the documented configuration"
    : "Caddy forward_auth in front of a static page: IGNORED, caddy is not installed (apt-get install caddy)",
  ignore: !CADDY,
  fn: async () => {
    const gate = await startGate();
    const port = freePort();
    const site = substitute(docBlock("caddyfile"), [
      ["example.com {", `http://127.0.0.1:${port} {`],
      ["# trusted_proxies 10.0.0.0/8", "trusted_proxies 127.0.0.1/32"],
      ["/var/www/html", gate.www],
      ["127.0.0.1:8000", `127.0.0.1:${gate.ipintel.port}`],
      ["YOUR_PROXY_KEY", gate.key],
    ]);
    await Deno.writeTextFile(
      `${gate.dir}/Caddyfile`,
      `{\n\tadmin off\n\tauto_https off\n}\n${site}`,
    );
    const caddy = new Deno.Command("caddy", {
      args: ["run", "--config", `${gate.dir}/Caddyfile`, "--adapter", "caddyfile"],
      env: { XDG_CONFIG_HOME: `${gate.dir}/caddy-config`, XDG_DATA_HOME: `${gate.dir}/caddy-data` },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let log = "";
    const reading = (async () => {
      for await (const text of caddy.stderr.pipeThrough(new TextDecoderStream())) log += text;
    })();
    try {
      await until(
        async () => {
          try {
            (await Deno.connect({ hostname: "127.0.0.1", port })).close();
            return true;
          } catch {
            return false;
          }
        },
        10_000,
        "caddy to listen",
      );
      const decisions = await acceptance(`http://127.0.0.1:${port}`, gate);
      assert.equal(await countedDecisions(gate), decisions);
      await keyRequired(gate);
    } catch (error) {
      throw new Error(`${(error as Error).message}\ncaddy log:\n${log}`, { cause: error });
    } finally {
      caddy.kill("SIGTERM");
      await caddy.status;
      await reading;
      await stopGate(gate);
    }
  },
});
