/** `GET /status`: what data is loaded, how old it is, and which configured sources are absent. */

import denoJson from "../../deno.json" with { type: "json" };
import { DataUnavailableError } from "../errors.ts";
import { redactUrls } from "../sources/redact_url.ts";
import type { Json } from "../types.ts";
import type { Handler } from "hono";
import { type AppEnv, FORMAT_HEADERS } from "./env.ts";
import type { ServiceSlot } from "./service_slot.ts";
import type { PolicyGate } from "../policy/gate.ts";

const DAY_MS = 86_400_000;

/** The route's handler; the uptime counts from this call; `now` is for tests. */
export function statusRoute(
  services: ServiceSlot,
  now = () => new Date(),
  policy: PolicyGate | null = null,
): Handler<AppEnv> {
  const started = now();
  return (c) => {
    const data = services.current?.data;
    if (!data) throw new DataUnavailableError("Data is not loaded yet: try again shortly");
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
        // Still served as installed; its last update failed (data update kept it).
        ...lastFailure(data.manifest.failures?.[s.name]),
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
        // The forward-auth policy served (IPINTEL_POLICY): its file's version and rules.
        ...(policy ? { policy: policy.status() } : {}),
        sources,
      },
    };
    return c.body(JSON.stringify(body), 200, FORMAT_HEADERS.json);
  };
}

/** `lastUpdateFailed` for a source whose last update failed (its URL's secrets redacted). */
function lastFailure(failure: { reason: string; at: string } | undefined): { [key: string]: Json } {
  return failure
    ? { lastUpdateFailed: { reason: redactUrls(failure.reason), at: failure.at } }
    : {};
}
