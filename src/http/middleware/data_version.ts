/**
 * Which data answers: the data set is pinned when a request arrives (a reload
 * meanwhile does not change it, even for a long stream), and its version is
 * named in `X-Data-Version` on every answer made while data is loaded,
 * errors included.
 */

import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import type { ServiceSlot } from "../service_slot.ts";

export function pinDataSet(services: ServiceSlot): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const served = services.current;
    c.set("served", served);
    await next();
    if (served) c.res.headers.set("x-data-version", served.data.version.id);
  };
}
