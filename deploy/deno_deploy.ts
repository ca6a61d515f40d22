/**
 * ipintel on Deno Deploy: the entry point Deploy runs as is
 * (`deployctl deploy --entrypoint deploy/deno_deploy.ts`).
 *
 * The same handler as `ipintel serve` (the Hono app with its metrics and access log),
 * with what Deploy offers instead of a machine: the KV from `Deno.openKv()`
 * (no path: the deployment's own database), the data files read from the
 * deployment (`data/`, uploaded with the code), nothing written to disk, no
 * `node:http`, no signals (Deploy stops isolates itself). Configuration comes
 * from the deployment's environment variables, as for `serve`.
 *
 * @module
 */

import { startAccess } from "../src/process/server/keys_limits.ts";
import { kvReadinessCheck } from "../src/process/server/kv.ts";
import { FILE_CHECKS } from "../src/process/server/data_dir.ts";
import { createServer } from "../src/process/server/server.ts";
import { openServed } from "../src/process/server/served.ts";
import { loadConfig } from "../src/base/config.ts";

const config = loadConfig(Deno.env.toObject(), {}, FILE_CHECKS);
// IPINTEL_KV still wins when set (e.g. a KV Connect URL, or :memory: in a test).
const kv = config.kv === null ? await Deno.openKv() : await Deno.openKv(config.kv);
const { access, readiness } = await startAccess(kv, config);

let loadError: Error | null = null;
const server = createServer({
  config,
  access,
  checks: [
    kvReadinessCheck(kv),
    readiness,
    { name: "data", check: () => loadError ? Promise.reject(loadError) : Promise.resolve() },
  ],
  // Deploy collects console output line by line, and may stop an isolate at any time.
  writeLog: (text) => console.log(text.trimEnd()),
  logFlushMs: 0,
});

// Port and host matter only off Deploy (Deploy routes requests itself).
Deno.serve({
  hostname: config.host,
  port: config.port,
  onListen: ({ port }) => console.error(`ipintel (Deno Deploy entry) listening on port ${port}`),
}, server.handler);

// Serve at once (503 until loaded); only the data already in the deployment is read.
openServed(config).then(
  (services) => {
    server.install(services);
    console.error(`ipintel: data loaded from ${config.dataDir}`);
  },
  (error) => {
    loadError = error instanceof Error ? error : new Error(String(error));
    console.error(`ipintel: cannot load the data: ${loadError.message}`);
  },
);
