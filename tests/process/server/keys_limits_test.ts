import assert from "node:assert/strict";
import {
  AccessControl,
  type AuthSetting,
} from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { assertNotOpenByDefault, describeAccess } from "../../../src/process/server/keys_limits.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";

async function accessFor(auth: AuthSetting, host: string, withKey = false) {
  const store = new MemoryKeyStore();
  if (withKey) await store.create({ name: "k" });
  const keys = new KeyTable(store);
  await keys.refresh();
  const config = { auth, host, rateLimit: 1000, rateWindow: 60, anonRateLimit: 0 };
  const access = new AccessControl(
    config,
    keys,
    new RateLimiter({ counters: new MemoryRateCounters() }),
  );
  return { access, config };
}

async function lines(auth: AuthSetting, host: string, withKey = false) {
  const { access, config } = await accessFor(auth, host, withKey);
  return describeAccess(access, config).join("\n");
}

Deno.test("an open API on a non-loopback address needs IPINTEL_AUTH=off said on purpose", async () => {
  const refused = async (auth: AuthSetting, host: string, withKey = false) => {
    const { access, config } = await accessFor(auth, host, withKey);
    try {
      assertNotOpenByDefault(access, config);
      return null;
    } catch (error) {
      return error as Error;
    }
  };
  for (const host of ["0.0.0.0", "::", "192.0.2.10"]) {
    const error = await refused("auto", host);
    assert.equal(error?.name, "ConfigError", host);
    assert.match(error!.message, new RegExp(`Refusing to serve ${host.replace(/\./g, "\\.")}`));
    assert.match(error!.message, /keys create --name NAME/);
    assert.match(error!.message, /IPINTEL_AUTH=off/);
  }
  assert.equal(await refused("off", "0.0.0.0"), null); // asked for
  assert.equal(await refused("auto", "0.0.0.0", true), null); // a key exists: auth required
  assert.equal(await refused("optional", "0.0.0.0"), null);
  for (const host of ["127.0.0.1", "localhost", "::1"]) {
    assert.equal(await refused("auto", host), null);
  }
});

Deno.test("start-up says the auth mode, and warns when an open API faces the network", async () => {
  assert.match(await lines("auto", "127.0.0.1"), /^ipintel: auth off \(no API keys yet/);
  assert.doesNotMatch(await lines("auto", "127.0.0.1"), /WARNING/);
  assert.match(await lines("auto", "0.0.0.0"), /WARNING: listening on 0\.0\.0\.0 with auth off/);
  assert.match(await lines("off", "::"), /WARNING: listening on :: with auth off/);
  assert.equal(
    await lines("auto", "0.0.0.0", true),
    "ipintel: auth required (keys: 1000 requests per 60 s)",
  );
  assert.equal(
    await lines("optional", "0.0.0.0"),
    "ipintel: auth optional (keys: 1000 requests per 60 s; keyless: unlimited)",
  );
});
