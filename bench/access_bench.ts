/**
 * CPU cost of the app and of access control, without the network: the Hono
 * app answering `GET /ip/{ip}` in process (`app.fetch`) with auth off, and
 * with a key (auth required, a limit never reached), over the real default
 * data; beside them a Hono hello-world (one route, a fixed JSON body) as the
 * framework's own floor.
 *
 * Run: `deno bench -A bench/access_bench.ts`. The keyed bench's "x slower"
 * against the plain one is the per-request price of the key check and the
 * rate limiter; `deno task bench:http` measures the same over HTTP.
 *
 * @module
 */

import { Hono } from "hono";
import { AccessControl } from "../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../src/service/keys_limits/rate_limiter.ts";
import { openServed } from "../src/process/server/served.ts";
import { loadConfig } from "../src/base/config.ts";
import { createApp } from "../src/service/app/app.ts";
import { MemoryKeyStore } from "../src/data/store/keys.ts";
import { MemoryRateCounters } from "../src/data/store/rate_counts.ts";
import { randomPublicAddresses } from "./_addresses.ts";

const config = loadConfig(Deno.env.toObject());
const slot = { current: await openServed(config) };
const store = new MemoryKeyStore();
const { key } = await store.create({ name: "bench", limit: 1_000_000_000 });
const keys = new KeyTable(store);
await keys.refresh();
const limiter = new RateLimiter({ counters: new MemoryRateCounters() });
const access = new AccessControl(
  { auth: "required", rateLimit: 1000, rateWindow: 60, anonRateLimit: 60 },
  keys,
  limiter,
);
const plain = createApp({ slot, config }).fetch;
const keyed = createApp({ slot, config, access }).fetch;
const addresses = randomPublicAddresses(1000, 1, {
  keep: (ip) => slot.current.data.city?.get(ip) != null,
});
const env = { remoteAddr: { transport: "tcp" as const, hostname: "127.0.0.1", port: 1 } };
const plainRequests = addresses.map((ip) => new Request(`http://localhost/ip/${ip}`));
const keyedRequests = addresses.map((ip) =>
  new Request(`http://localhost/ip/${ip}`, { headers: { "x-api-key": key } })
);
await keyed(keyedRequests[0]!, env); // the first keyed request syncs the limiter

const hello = new Hono().get(
  "/ip/:ip{.+}",
  (c) => c.json({ success: true, ip: c.req.param("ip") }),
);

let i = 0;
Deno.bench("Hono hello-world", { group: "app", baseline: true }, async () => {
  await (await hello.fetch(plainRequests[i++ % plainRequests.length]!)).text();
});
Deno.bench("ipintel /ip, auth off", { group: "app" }, async () => {
  await (await plain(plainRequests[i++ % plainRequests.length]!, env)).text();
});
Deno.bench("ipintel /ip, keyed and rate-limited", { group: "app" }, async () => {
  await (await keyed(keyedRequests[i++ % keyedRequests.length]!, env)).text();
});
