/**
 * As an operator runs it: `ipintel data update` with a security list that
 * arrives cut short is refused, naming the source and why, while the other
 * lists install; the next good download installs it, and `ipintel lookup
 * --get risk` names every list and entry.
 */

import assert from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { startFeedServer, writeBaseDataDir } from "../data/update/_feed_server.ts";

const FIXTURES = new URL("../fixtures/feeds/", import.meta.url).pathname;

/** `ipintel <args>`, as the data tests run it. */
function cli(...args: string[]) {
  return runCli(args, { NO_COLOR: "1", IPINTEL_UPDATE_TIMEOUT: "5" }, 60_000);
}

Deno.test("a DROP file cut short is refused by name; a whole one installs and explains lookups", async () => {
  const server = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    const drop = await Deno.readTextFile(`${FIXTURES}spamhaus_drop_v4.jsonl`);
    const cut = drop.split("\n").slice(0, 5).join("\n") + "\n"; // no metadata line
    server.routes.set("/drop", { body: cut, etag: '"cut"' });
    server.routes.set("/tor", { body: await Deno.readFile(`${FIXTURES}tor_bulk_exit_list.txt`) });
    // An update installs exactly the sources file: the base ASN database is one of them.
    server.routes.set("/asn", { body: await Deno.readFile(`${dataDir}/asn.mmdb`) });
    const sourcesFile = `${dataDir}/sources.json`;
    await Deno.writeTextFile(
      sourcesFile,
      JSON.stringify({
        sources: [
          { name: "test-asn", kind: "asn", format: "mmdb", url: server.url("/asn") },
          { name: "tor-exits", kind: "tor", format: "ip-list", url: server.url("/tor") },
          { name: "drop", kind: "threat", format: "drop-json", url: server.url("/drop") },
        ],
      }),
    );
    const first = await cli("data", "update", "--sources", sourcesFile, "--data-dir", dataDir);
    assert.equal(first.code, 1, first.stdout + first.stderr);
    const output = first.stdout + first.stderr;
    assert.match(output, /drop: FAILED: drop: no metadata line \(the file is incomplete\)/);
    assert.match(output, /tor-exits: \d+ entries/);

    server.routes.set("/drop", { body: drop, etag: '"whole"' });
    const second = await cli("data", "update", "--sources", sourcesFile, "--data-dir", dataDir);
    assert.equal(second.code, 0, second.stdout + second.stderr);

    const lookup = await cli(
      "lookup",
      "1.10.16.7",
      "185.241.208.232",
      "--get",
      "security,risk",
      "--data-dir",
      dataDir,
    );
    assert.equal(lookup.code, 0, lookup.stderr);
    const [dropped, tor] = lookup.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(dropped.security, { isVpn: null, isTor: false, isThreat: "high" });
    assert.equal(dropped.risk.matches.length, 1);
    const { firstSeen, lastSeen, ...match } = dropped.risk.matches[0];
    assert.deepEqual(match, {
      source: "drop",
      kind: "threat",
      network: "1.10.16.0/20",
      dataDate: "2026-07-23T09:14:02.000Z",
    });
    // Installed by the second update, the latest: first and last seen then (src/data/history).
    assert.match(firstSeen, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    assert.equal(lastSeen, firstSeen);
    assert.equal(dropped.risk.reason, "high: on a threat list (drop)");
    assert.equal(tor.risk.anonymizer, "tor");
    assert.equal(tor.risk.matches[0].network, "185.241.208.232");
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
