/** `GET /status`: what data is loaded, how old it is, and which configured sources are absent. */

import type { Hono } from "hono";
import denoJson from "../../deno.json" with { type: "json" };
import type { Json } from "../types.ts";
import type { ServiceSlot } from "./service_slot.ts";

const DAY_MS = 86_400_000;

/** Registers the route; `headers` are the app's JSON headers (CORS); `now` is for tests. */
export function registerStatusRoute(
  // deno-lint-ignore no-explicit-any
  app: Hono<any>,
  services: ServiceSlot,
  headers: Record<string, string>,
  now = () => new Date(),
) {
  const started = now();
  app.get("/status", (c) => {
    const data = services.current?.data;
    if (!data) {
      const body = { success: false, message: "Data is not loaded yet: try again shortly" };
      return c.body(JSON.stringify(body), 503, headers);
    }
    const at = now();
    const ageDays = (date: string | null) =>
      date === null ? null : Math.floor((at.getTime() - Date.parse(date)) / DAY_MS);
    const sources: Json[] = [
      ...data.installed.map((s) => ({
        name: s.name,
        kind: s.kind,
        status: "installed",
        source: s.source,
        databaseType: s.databaseType,
        dataDate: s.dataDate,
        ageDays: ageDays(s.dataDate),
        count: s.count,
        license: s.license,
        attribution: s.attribution,
      })),
      ...data.absent.map((s) => ({
        name: s.name,
        kind: s.kind,
        status: "absent",
        reason: s.reason,
      })),
    ];
    const body = {
      success: true,
      data: {
        version: denoJson.version,
        uptimeSeconds: Math.floor((at.getTime() - started.getTime()) / 1000),
        sources,
      },
    };
    return c.body(JSON.stringify(body), 200, headers);
  });
}
