/** `ipintel serve`: loads the data (building it on first run) and serves the HTTP API. */

import type { Config } from "../config.ts";
import { createApp, type ServiceSlot } from "../http/app.ts";
import { ensureData } from "./data.ts";
import { createServices } from "./services.ts";

/** Serves until SIGINT/SIGTERM, then drains in-flight requests. */
export async function runServe(config: Config): Promise<number> {
  // Listen at once; lookups answer 503 until the data (built on first run) is loaded.
  const services: ServiceSlot = { current: null };
  const app = createApp({ services, config });
  const controller = new AbortController();
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    signal: controller.signal,
    onListen: ({ hostname, port }) =>
      console.error(`ipintel listening on http://${hostname}:${port}`),
  }, app.fetch);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => controller.abort());
  }
  try {
    await ensureData(config);
    services.current = await createServices(config);
    console.error(`ipintel: data loaded from ${config.dataDir}`);
  } catch (error) {
    controller.abort();
    await server.finished;
    throw error;
  }
  await server.finished;
  return 0;
}
