/** `GET /status`: what data is loaded, how old it is, and which configured sources are absent. */

import type { Handler } from "../http/route.ts";
import denoJson from "../../../deno.json" with { type: "json" };
import { DataUnavailableError } from "../../base/errors.ts";
import { redactUrls, sourceOrigin, sourceOrigins } from "../../data/sources/redact_url.ts";
import type { Json } from "../../base/types.ts";
import type { DataSet } from "../../data/sources/data_set.ts";

import { FORMAT_HEADERS } from "../http/env.ts";
import type { PolicyGate } from "../policy/gate.ts";

const DAY_MS = 86_400_000;

/** What `/status` shows besides the data set: the server's own state. */
export interface StatusOptions {
  /** When the server started (the uptime counts from it). */
  started: Date;
  now: Date;
  /** Why the data directory cannot be written, or null. */
  readOnly: string | null;
  policy: PolicyGate | null;
  /** IPINTEL_STATUS_DETAIL: full source URLs and failure reasons (secrets redacted either way). */
  detail: boolean;
}

/**
 * The `data` of `/status` for `data`: the version, the uptime, the data
 * version, each source installed or absent (with its age and licence), the
 * policy. Source URLs, and URLs and paths in failure reasons, are shown as
 * scheme and host only (a path may hold a token or name an internal layout),
 * the policy file by its name and the read-only data directory without its
 * path, unless `detail`; their secrets are redacted either way.
 */
export function statusData(data: DataSet, options: StatusOptions): Json {
  const { now: at, detail, readOnly, policy } = options;
  const shown = detail ? (text: string) => text : sourceOrigin;
  const reasonShown = detail ? (text: string) => text : sourceOrigins;
  const lastFailure = (failure: { reason: string; at: string } | undefined): Record<string, Json> =>
    failure
      ? { lastUpdateFailed: { reason: reasonShown(redactUrls(failure.reason)), at: failure.at } }
      : {};
  const ageDays = (date: string | null) =>
    date === null ? null : Math.floor((at.getTime() - Date.parse(date)) / DAY_MS);
  // A crawler list says which crawler it verifies and the user-agent tokens that claim it.
  const crawlers = new Map((data.crawlers ?? []).map((c) => [c.source, c]));
  const crawlerOf = (name: string): Record<string, Json> => {
    const c = crawlers.get(name);
    return c ? { crawler: c.crawler, operator: c.operator, userAgents: [...c.userAgents] } : {};
  };
  const sources: Json[] = [
    ...data.installed.map((s) => ({
      name: s.name,
      kind: s.kind,
      ...crawlerOf(s.name),
      status: "installed",
      source: shown(s.source),
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
      reason: reasonShown(s.reason),
    })),
  ];
  return {
    version: denoJson.version,
    uptimeSeconds: Math.floor((at.getTime() - options.started.getTime()) / 1000),
    // The id every answer names in X-Data-Version, and when its newest source was installed.
    dataVersion: { id: data.version.id, installedAt: data.version.installedAt },
    // Updates cannot install while this is set; the installed data is served as it is.
    ...(readOnly === null ? {} : { dataDirectoryReadOnly: reasonShown(readOnly) }),
    // The forward-auth policy served (IPINTEL_POLICY): its file's version and rules.
    ...(policy ? { policy: policyShown(policy, detail) } : {}),
    sources,
  };
}

/** The policy part: its file by name only (its directory is the server's layout) unless `detail`. */
function policyShown(policy: PolicyGate, detail: boolean): Json {
  const status = policy.status();
  return { ...status, file: detail ? status.file : basename(status.file) };
}

const basename = (path: string) => path.slice(path.replace(/\\/g, "/").lastIndexOf("/") + 1);

/**
 * The route's handler, over the data set pinned for the request; the uptime
 * counts from this call. `dataDirectoryProblem` says why the data directory
 * cannot be written (null: it can), where the server keeps one; `policy` is
 * the forward-auth gate, shown when there is one; `now` is for tests.
 */
export function statusRoute(
  dataDirectoryProblem?: () => Promise<string | null>,
  now = () => new Date(),
  policy: PolicyGate | null = null,
  options: { detail: boolean } = { detail: false },
): Handler {
  const started = now();
  return async (c) => {
    const data = c.get("served")?.data;
    if (!data) throw new DataUnavailableError("Data is not loaded yet: try again shortly");
    const readOnly = await dataDirectoryProblem?.() ?? null;
    const body = {
      success: true,
      data: statusData(data, { started, now: now(), readOnly, policy, detail: options.detail }),
    };
    return c.body(JSON.stringify(body), 200, FORMAT_HEADERS.json);
  };
}
