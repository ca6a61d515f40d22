// temporary: in-process CPU µs per /ip request through the server handler (not committed)
const ROOT = Deno.env.get("ROOT") ?? "..";
const { createServer } = await import(`${ROOT}/src/server/server.ts`);
const { createServices } = await import(`${ROOT}/src/server/services.ts`);
const { loadConfig } = await import(`${ROOT}/src/config.ts`);
import { CEILING_BODY } from "./ceiling_server.ts";
import { Hono } from "hono";
import { RegExpRouter } from "hono/router/reg-exp-router";
import process from "node:process";

const config = loadConfig({ ...Deno.env.toObject(), IPINTEL_AUTH: "off" });
const services = await createServices(config);
const server = createServer({ config: { ...config, log: "errors" }, writeLog: () => {} });
server.install(services);
const addrs = Deno.readTextFileSync("/tmp/addr.txt").split("\n");
const env = { remoteAddr: { transport: "tcp" as const, hostname: "127.0.0.1", port: 4000 } };
const H = { "content-type": "application/json; charset=utf-8" };
const bare = (_r: Request) => new Response(CEILING_BODY, { headers: H });
const hono = new Hono({ router: new RegExpRouter() });
hono.get("/ip/:ip{.+}", (c) => c.body(CEILING_BODY, 200, H));
const ONLY = Deno.env.get("ONLY");
const handlers: Record<string, (r: Request, e?: unknown) => Response | Promise<Response>> = {
  bare, hono: (r) => hono.fetch(r), ipintel: (r) => server.handler(r, env),
};
async function run(h: (r: Request, e?: unknown) => Response | Promise<Response>, n: number) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const req = pool[i % pool.length]!;
    const res = await h(req, env);
    if (res.status !== 200) throw new Error(String(res.status));
    await res.text();
  }
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}
const pool = addrs.map((a) => new Request(`http://127.0.0.1:8000/ip/${a}`, { headers: { "user-agent": "wrk", host: "127.0.0.1:8000" } }));
const N = Number(Deno.env.get("N") ?? 50000);
if (ONLY) for (const k in handlers) if (k !== ONLY && k !== "bare") delete handlers[k];
for (const k in handlers) await run(handlers[k]!, 20000);
const res: Record<string, number[]> = {};
for (let round = 0; round < 5; round++) {
  for (const k in handlers) (res[k] ??= []).push(await run(handlers[k]!, N));
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const k in res) console.log(k.padEnd(8), med(res[k]!).toFixed(2), "µs", (med(res[k]!) / med(res.bare!)).toFixed(2) + "×");
