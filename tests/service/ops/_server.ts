/** A server handler (app + fast path + instrumentation) over the fixture data, called in-process. */

import { servedOf } from "../../../src/service/http/env.ts";
import type { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { createServer, type Server } from "../../../src/process/server/server.ts";
import type { Config } from "../../../src/base/config.ts";
import type { ReadinessCheck } from "../../../src/service/ops/readiness.ts";
import { fixtureDataSet, fixtureLookup, peer } from "../../_helpers.ts";

export interface TestServer {
  server: Server;
  /** Access log lines written so far (flushed). */
  lines(): string[];
  /** Diagnostics written (5xx details). */
  errors: string[];
  /** Sends one request from `from` (the TCP peer). */
  request(path: string, init?: RequestInit, from?: string): Promise<Response>;
}

export async function testServer(
  config: Partial<
    Pick<Config, "log" | "logFullIp" | "metrics" | "metricsToken" | "trustedProxies">
  > = {},
  options: { access?: AccessControl; checks?: ReadinessCheck[]; loaded?: boolean } = {},
): Promise<TestServer> {
  const written: string[] = [];
  const errors: string[] = [];
  const server = createServer({
    config: {
      bulkMax: 100,
      trustedProxies: config.trustedProxies ?? [],
      forwardedHeader: "x-forwarded-for",
      corsOrigins: ["*"],
      metrics: config.metrics ?? true,
      metricsToken: config.metricsToken ?? null,
      log: config.log ?? "on",
      logFullIp: config.logFullIp ?? false,
    },
    access: options.access,
    checks: options.checks,
    writeLog: (text) => written.push(text),
    writeError: (text) => errors.push(text),
  });
  if (options.loaded ?? true) {
    server.install(servedOf(await fixtureDataSet(), await fixtureLookup()));
  }
  return {
    server,
    errors,
    lines: () => {
      server.flushLog();
      return written.join("").split("\n").filter((line) => line !== "");
    },
    request: async (path, init, from = "203.0.113.9") =>
      await server.handler(new Request(`http://localhost${path}`, init), peer(from)),
  };
}

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text format strictly enough to catch malformed output:
 * every line is a comment (`# HELP`/`# TYPE`) or `name{labels} value`.
 */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`Not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const labelText = match[2] ?? "";
    const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/gy;
    let consumed = 0;
    for (let m = pattern.exec(labelText); m; m = pattern.exec(labelText)) {
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c) => c === "n" ? "\n" : c);
      consumed = pattern.lastIndex;
    }
    if (consumed !== labelText.length) throw new Error(`Bad labels in ${JSON.stringify(line)}`);
    const value = match[3] === "+Inf" ? Infinity : Number(match[3]);
    if (Number.isNaN(value)) throw new Error(`Bad value in ${JSON.stringify(line)}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

/** The value of the one sample with this name and these labels (undefined when absent). */
export function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) &&
    Object.keys(s.labels).length === Object.keys(labels).length
  );
  if (found.length > 1) throw new Error(`${found.length} samples match ${name}`);
  return found[0]?.value;
}
