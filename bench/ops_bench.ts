/**
 * What the instrumentation (metrics, and optionally the access log) costs the
 * fast path, measured without sockets: the server's handler for a plain
 * `GET /ip/{ip}`, bare and wrapped, called directly on real data.
 *
 * Run: `deno task bench:ops` (deno bench --allow-read --allow-env bench/ops_bench.ts).
 *
 * Each iteration answers 1,000 requests cycling through random public
 * addresses the City database knows (warm caches), with prebuilt Requests.
 * One group, the bare handler as baseline; deno bench prints how much slower
 * each wrapped variant is. Goal: metrics only (IPINTEL_LOG=off) within 5% of
 * bare. The log variants write into a discarded sink (no system call), so
 * they show the cost of making the lines, not of writing them.
 *
 * Env: IPINTEL_DATA_DIR (default ./data).
 *
 * @module
 */

import { createServer } from "../src/process/server/server.ts";
import { openServed } from "../src/process/server/served.ts";
import { loadConfig } from "../src/base/config.ts";
import { createApp } from "../src/service/app/app.ts";
import type { ServedSlot } from "../src/service/http/env.ts";
import { randomPublicAddresses } from "./_addresses.ts";

const config = loadConfig({ ...Deno.env.toObject(), IPINTEL_AUTH: "off" });
const services = await openServed(config);
const city = services.data.city!;
const addresses = randomPublicAddresses(1000, 7, { keep: (ip) => city.get(ip) !== null });
const USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
  "Chrome/120.0.0.0 Safari/537.36";
const requests = addresses.map((ip) =>
  new Request(`http://127.0.0.1:8000/ip/${ip}`, { headers: { "user-agent": USER_AGENT } })
);
const peerEnv = { remoteAddr: { transport: "tcp" as const, hostname: "81.2.69.142", port: 40000 } };

type Handler = (request: Request, env: typeof peerEnv) => Response | Promise<Response>;

function bare(): Handler {
  const slot: ServedSlot = { current: services };
  return createApp({ slot, config }).fetch;
}

function wrapped(log: "off" | "on" | "errors"): Handler {
  const server = createServer({ config: { ...config, log }, writeLog: () => {} });
  server.install(services);
  return server.handler;
}

async function run(handler: Handler) {
  for (const request of requests) {
    const response = handler(request, peerEnv);
    // Sync answers are the fast path's; the log variant answers asynchronously.
    const answered = response instanceof Promise ? await response : response;
    if (answered.status !== 200) throw new Error(`status ${answered.status}`);
  }
}

const handlers: [string, Handler, boolean][] = [
  ["bare fast path", bare(), true],
  ["metrics (IPINTEL_LOG=off)", wrapped("off"), false],
  ["metrics + log errors only", wrapped("errors"), false],
  ["metrics + log every request", wrapped("on"), false],
];
for (const [, handler] of handlers) await run(handler); // warm every cache first

for (const [name, handler, baseline] of handlers) {
  Deno.bench({ name, group: "GET /ip/{ip} x1000", baseline, fn: () => run(handler) });
}
