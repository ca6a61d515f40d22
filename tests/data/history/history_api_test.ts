/**
 * The acceptance, end to end: two updates of a Tor list served on
 * loopback, the second dropping one exit, installed by `data update` and
 * answered by the HTTP app (`app.request`): first/last seen on current
 * matches, `?at=` between the updates, before the kept history, and malformed.
 */

import assert from "node:assert/strict";
import { HISTORY_FILE } from "../../../src/data/history/history_file.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { RESULT_LAYOUT } from "../../../src/base/types.ts";
import { runCli } from "../../_cli.ts";
import { fixtureApp } from "../../_helpers.ts";
import { feedSource, startFeedServer, update, writeBaseDataDir } from "../update/_feed_server.ts";

const FIRST = new Date("2026-11-01T06:00:00Z");
const SECOND = new Date("2026-11-02T06:00:00Z");
const NOW = new Date("2026-11-03T12:00:00Z");
// Real exits from the Tor bulk exit list fixture.
const KEPT = "185.241.208.232";
const DROPPED = "171.25.193.25";

/** A data directory after the two updates, and the app over it (its clock at NOW). */
async function twoUpdates() {
  const dataDir = await writeBaseDataDir();
  const server = startFeedServer();
  try {
    const tor = [feedSource(server, "tor-exits", "tor", "/tor")];
    server.routes.set("/tor", { body: `${KEPT}\n194.26.192.64\n${DROPPED}\n` });
    const first = await update(dataDir, tor, { now: () => FIRST, historyDays: 365 });
    assert.deepEqual(first.outcomes.map((o) => o.status), ["updated"]);
    server.routes.set("/tor", { body: `${KEPT}\n194.26.192.64\n` });
    const second = await update(dataDir, tor, { now: () => SECOND, historyDays: 365 });
    assert.deepEqual(second.outcomes.map((o) => o.status), ["updated"]);
    assert.ok(!second.progress.some((line) => line.startsWith("history:")), "recorded quietly");
  } finally {
    await server.close();
  }
  const data = await openDataSet(dataDir);
  const app = await fixtureApp({
    data,
    now: NOW,
    config: { bulkMax: 100 },
    logError: (error) => {
      throw error;
    },
  });
  const get = async (path: string) => {
    const response = await app.request(path);
    return { status: response.status, json: await response.json() };
  };
  return { dataDir, get };
}

Deno.test("acceptance: first/last seen, ?at= between two updates, before the history, malformed", async () => {
  const { dataDir, get } = await twoUpdates();
  try {
    await Deno.stat(`${dataDir}/${HISTORY_FILE}`); // beside the manifest

    // A current match: first seen at the first update, last seen at the latest one.
    const kept = await get(`/ip/${KEPT}?get=security,risk`);
    assert.equal(kept.status, 200);
    assert.equal(kept.json.data.security.isTor, true);
    assert.deepEqual(kept.json.data.risk.matches, [{
      source: "tor-exits",
      kind: "tor",
      network: KEPT,
      dataDate: SECOND.toISOString(),
      firstSeen: FIRST.toISOString(),
      lastSeen: SECOND.toISOString(),
    }]);
    assert.equal(kept.json.data.risk.asOf, null);

    // Without `at`, the dropped exit is not one; the spec's default layout is unchanged.
    const now = await get(`/ip/${DROPPED}?get=security,risk`);
    assert.equal(now.json.data.security.isTor, false);
    assert.deepEqual(now.json.data.risk.matches, []);
    const plain = await get(`/ip/${DROPPED}`);
    assert.deepEqual(Object.keys(plain.json.data.security), Object.keys(RESULT_LAYOUT.security));

    // Between the updates it was one: named with its list and its last sighting.
    const between = "2026-11-01T18:30:00Z";
    const then = await get(`/ip/${DROPPED}?get=security,risk,connection&at=${between}`);
    assert.equal(then.status, 200);
    const asOf = new Date(between).toISOString();
    assert.deepEqual(then.json.data.security.isTor, true);
    assert.equal(then.json.data.security.isThreat, "high");
    assert.equal(then.json.data.security.asOf, asOf);
    assert.match(then.json.data.security.note, /connection \(ASN\) are from the current data/);
    assert.deepEqual(then.json.data.risk.matches, [{
      source: "tor-exits",
      kind: "tor",
      network: DROPPED,
      dataDate: null,
      firstSeen: FIRST.toISOString(),
      lastSeen: FIRST.toISOString(),
    }]);
    assert.equal(then.json.data.risk.asOf, asOf);
    assert.equal(then.json.data.risk.reason, "high: Tor exit (tor-exits)");
    // Location and ASN come from the current data all the same.
    assert.equal(then.json.data.connection.asn_number, 64500);

    // The whole default answer with `at`: security says the time; a bulk list too.
    const whole = await get(`/ip/${DROPPED}?at=${between}`);
    assert.equal(whole.json.data.security.isTor, true);
    assert.equal(whole.json.data.security.asOf, asOf);
    const bulk = await get(`/bulk/${DROPPED},${KEPT}?at=${between}&get=ip,isTor`);
    assert.deepEqual(bulk.json.data.responseArray, [
      { ip: DROPPED, isTor: true },
      { ip: KEPT, isTor: true },
    ]);

    // Before the first update (400 days back): refused, saying where the history starts.
    const early = new Date(NOW.getTime() - 400 * 86_400_000).toISOString();
    const refused = await get(`/ip/${DROPPED}?at=${early}`);
    assert.equal(refused.status, 422);
    assert.equal(refused.json.success, false);
    assert.match(refused.json.message, new RegExp(`starts at ${FIRST.toISOString()}`));

    // Malformed: a 400 naming the parameter.
    const bad = await get(`/ip/${DROPPED}?at=not-a-time`);
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /^Invalid at "not-a-time": expected an ISO 8601 time/);
    const future = await get(`/ip/${DROPPED}?at=2027-01-01`);
    assert.equal(future.status, 400);
    assert.match(future.json.message, /in the future/);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("ipintel lookup --at answers the lists of then; a malformed --at is a usage error", async () => {
  const { dataDir } = await twoUpdates();
  try {
    const env = { IPINTEL_DATA_DIR: dataDir, IPINTEL_WORKERS: "1" };
    const then = await runCli(
      ["lookup", "--at", "2026-11-01T18:30:00Z", "--get", "isTor,risk.matches", DROPPED],
      env,
    );
    assert.equal(then.code, 0, then.stderr);
    assert.deepEqual(JSON.parse(then.stdout), {
      ip: DROPPED,
      isTor: true,
      risk: {
        matches: [{
          source: "tor-exits",
          kind: "tor",
          network: DROPPED,
          dataDate: null,
          firstSeen: FIRST.toISOString(),
          lastSeen: FIRST.toISOString(),
        }],
      },
    });
    const now = await runCli(["lookup", "--get", "isTor", DROPPED], env);
    assert.deepEqual(JSON.parse(now.stdout), { ip: DROPPED, isTor: false });
    const bad = await runCli(["lookup", "--at", "last tuesday", DROPPED], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Invalid --at "last tuesday": expected an ISO 8601 time/);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
