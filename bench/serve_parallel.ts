/**
 * ipintel's handler as a `deno serve` module, for bench:http's comparison of
 * `deno serve --parallel` (one isolate per CPU, each loading its own copy of
 * the data) with ipintel's own workers (one shared copy, coordinated reload).
 * Auth off, metrics and log as configured; not a supported way to run ipintel.
 *
 * Run: deno serve --parallel -A --port 8000 bench/serve_parallel.ts
 *
 * @module
 */

import { createServer } from "../src/process/server/server.ts";
import { createSharedParts, openServed } from "../src/process/server/served.ts";
import { loadConfig } from "../src/base/config.ts";

const config = loadConfig({ ...Deno.env.toObject(), IPINTEL_AUTH: "off" });
const server = createServer({ config, writeLog: (text) => console.log(text.trimEnd()) });
server.install(await openServed(config, createSharedParts("background")));

export default {
  fetch: (request, info) => server.handler(request, info as Deno.ServeHandlerInfo<Deno.NetAddr>),
} satisfies Deno.ServeDefaultExport;
