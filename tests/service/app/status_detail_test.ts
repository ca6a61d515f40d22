/**
 * `/status` shows where each source comes from as scheme and host only (a
 * path may hold a token, or name internal hosts and files), unless the
 * operator turned IPINTEL_STATUS_DETAIL on; secrets are redacted either way.
 */

import assert from "node:assert/strict";
import type { DataSet } from "../../../src/data/sources/data_set.ts";
import { fixtureApp, fixtureDataSet } from "../../_helpers.ts";

const TOKEN_URL = "https://feeds.corp.internal:8443/t0k3n-abc/blocklist.txt";

/** The fixture data set, as if it also held an operator's feed and lacked another. */
async function dataWithOperatorSources(): Promise<DataSet> {
  const data = await fixtureDataSet();
  return {
    ...data,
    installed: [
      ...data.installed,
      { ...data.installed[0]!, name: "corp-blocklist", kind: "threat", source: TOKEN_URL },
      {
        ...data.installed[0]!,
        name: "corp-local",
        kind: "threat",
        source: "file:///srv/t0k3n/a.txt",
      },
    ],
    absent: [{
      name: "corp-vpn",
      kind: "vpn",
      reason:
        "Download from http://10.9.8.7/private/vpn.txt failed: HTTP 404; see /srv/feeds/vpn.txt",
    }],
    manifest: {
      ...data.manifest,
      failures: {
        "corp-blocklist": {
          reason: `Download from ${TOKEN_URL}?key=REDACTED failed: HTTP 500`,
          at: "2026-11-26T12:00:00.000Z",
        },
      },
    },
  };
}

async function statusWith(statusDetail?: boolean) {
  const app = await fixtureApp({ data: await dataWithOperatorSources(), config: { statusDetail } });
  const response = await app.request("/status");
  assert.equal(response.status, 200);
  const text = await response.text();
  const byName = Object.fromEntries(
    (JSON.parse(text).data.sources as { name: string }[]).map((s) => [s.name, s]),
  ) as Record<string, Record<string, unknown>>;
  return { text, byName };
}

Deno.test("/status shows source URLs as scheme and host only by default: no path, token or file name", async () => {
  const { text, byName } = await statusWith();
  assert.equal(byName["corp-blocklist"]!.source, "https://feeds.corp.internal:8443");
  assert.equal(byName["corp-local"]!.source, "file://");
  assert.deepEqual(byName["corp-blocklist"]!.lastUpdateFailed, {
    reason: "Download from https://feeds.corp.internal:8443 failed: HTTP 500",
    at: "2026-11-26T12:00:00.000Z",
  });
  assert.equal(
    byName["corp-vpn"]!.reason,
    "Download from http://10.9.8.7 failed: HTTP 404; see file://",
  );
  assert.doesNotMatch(text, /t0k3n|private|\/srv\//);
  // Public package names tell an operator which data is loaded, and hide nothing.
  assert.match(text, /"source":"(npm:|test fixture)/);
});

Deno.test("with IPINTEL_STATUS_DETAIL on, /status shows the URLs whole (their secrets still redacted)", async () => {
  const { byName } = await statusWith(true);
  assert.equal(byName["corp-blocklist"]!.source, TOKEN_URL);
  assert.equal(byName["corp-local"]!.source, "file:///srv/t0k3n/a.txt");
  assert.match(
    (byName["corp-blocklist"]!.lastUpdateFailed as { reason: string }).reason,
    /\/t0k3n-abc\/blocklist\.txt\?key=REDACTED failed/,
  );
  assert.match(byName["corp-vpn"]!.reason as string, /http:\/\/10\.9\.8\.7\/private\/vpn\.txt/);
});

Deno.test("/ready, open to probes, shows its databases' sources as scheme and host only unless detail is on", async () => {
  const base = await fixtureDataSet();
  const data: DataSet = {
    ...base,
    manifest: {
      ...base.manifest,
      sources: base.manifest.sources.map((s, i) => i === 0 ? { ...s, source: TOKEN_URL } : s),
    },
  };
  const ready = async (statusDetail: boolean) => {
    const app = await fixtureApp({ data, config: { statusDetail } });
    const response = await app.request("/ready");
    assert.equal(response.status, 200);
    return (await response.json()).data.databases[0].source as string;
  };
  assert.equal(await ready(false), "https://feeds.corp.internal:8443");
  assert.equal(await ready(true), TOKEN_URL);
});

Deno.test("a read-only data directory is shown without its path unless IPINTEL_STATUS_DETAIL is on", async () => {
  const problem = "the data directory /srv/ipintel/data is read-only (Read-only file system)";
  for (const statusDetail of [false, true]) {
    const app = await fixtureApp({
      config: { statusDetail },
      dataDirectory: () => Promise.resolve(problem),
    });
    const response = await app.request("/status");
    const shown = (await response.json()).data.dataDirectoryReadOnly;
    if (statusDetail) assert.equal(shown, problem);
    else assert.equal(shown, "the data directory file:// is read-only (Read-only file system)");
  }
});
