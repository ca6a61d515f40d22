/** The app over the fixture data for the compatible APIs' tests: keys, limits and security signals. */

import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { NO_FEEDS, type RiskSignals, type RiskSource } from "../../../src/data/risk/security.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { FIXED_NOW, fixtureApp, fixtureDataSet, peer } from "../../_helpers.ts";

/** What the (fake) security sources say: a Tor exit, a VPN in a hosting range, the rest clean. */
const SIGNALS: Record<string, Partial<RiskSignals>> = {
  "81.2.69.142": { tor: true },
  "2a02:ec0::1": { vpn: true, hosting: true },
};
const RISK: RiskSource = {
  signals: (ip) => ({
    tor: false,
    vpn: false,
    blocklisted: false,
    hosting: false,
    ...SIGNALS[ip.address],
  }),
  explain: NO_FEEDS.explain,
};

/**
 * The app with security sources (or none: `risk: false`), and, with `limit`,
 * keys required: `key` has `limit` requests per minute.
 */
export async function compatApp(options: { risk?: boolean; limit?: number } = {}) {
  const data = await fixtureDataSet();
  const lookup = createLookup({
    data,
    now: () => FIXED_NOW,
    parseUserAgent: createUserAgentParser(),
    risk: options.risk === false ? undefined : RISK,
  });
  let access: AccessControl | undefined;
  let key = "";
  if (options.limit !== undefined) {
    const store = new MemoryKeyStore();
    key = (await store.create({ name: "client", limit: options.limit })).key;
    const keys = new KeyTable(store);
    await keys.refresh();
    access = new AccessControl(
      { auth: "required", rateLimit: 1000, rateWindow: 60, anonRateLimit: 0 },
      keys,
      new RateLimiter({ counters: new MemoryRateCounters() }),
    );
  }
  const errors: unknown[] = [];
  const app = await fixtureApp({
    data,
    lookup,
    config: { bulkMax: 5 },
    access,
    logError: (error) => errors.push(error),
  });
  /** One request from 81.2.69.142 (the caller of `me`). */
  const request = (path: string, init: RequestInit = {}) =>
    app.fetch(new Request(`http://localhost${path}`, init), peer("81.2.69.142"));
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  return { app, key, errors, request, post };
}
