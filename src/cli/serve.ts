/** `ipintel serve`: loads the data (building it on first run) and serves the HTTP API. */

import type { Config } from "../config.ts";
import { createApp } from "../http/app.ts";
import { ensureData } from "./data.ts";
import { createServices } from "./services.ts";

/** Serves until SIGINT/SIGTERM, then drains in-flight requests. */
export async function runServe(config: Config): Promise<number> {
  await ensureData(config);
  const services = await createServices(config);
  const app = createApp({ ...services, config });
  const controller = new AbortController();
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    signal: controller.signal,
    onListen: ({ hostname, port }) => console.error(`ipintel listening on http://${hostname}:${port}`),
  }, app.fetch);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => controller.abort());
  }
  await server.finished;
  return 0;
}
