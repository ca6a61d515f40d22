import assert from "node:assert/strict";
import { parseFieldSelection } from "../../../src/core/format/select.ts";
import { applySelection } from "../../../src/core/format/mod.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import {
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../../data/update/_feed_server.ts";
import { FIXED_NOW, fixtureApp, fixtureLookup } from "../../_helpers.ts";

const network = parseFieldSelection("network");

Deno.test("get=network gives each database's matched network; the default answer has none", async () => {
  const lookup = await fixtureLookup();
  const result = lookup.find("81.2.69.160", { selection: network });
  assert.deepEqual(applySelection(result, network), {
    ip: "81.2.69.160",
    network: [
      { source: "city", kind: "city", network: "81.2.69.0/24" },
      { source: "asn", kind: "asn", network: "81.2.69.0/24" },
    ],
  });
  assert.equal("network" in lookup.find("81.2.69.160"), false);
  assert.equal(
    "network" in lookup.find("81.2.69.160", { selection: parseFieldSelection("city") }),
    false,
  );
  // Only the sources that answered: 9.9.9.9 is in the ASN database alone.
  assert.deepEqual(lookup.find("9.9.9.9", { selection: network }).network, [
    { source: "asn", kind: "asn", network: "9.9.9.0/24" },
  ]);
  // IPv6: the network in the address's own terms.
  assert.deepEqual(
    lookup.find("2a02:ec0::1", { selection: network }).network?.map((n) => n.network),
    [
      "2a02:ec0::/29",
      "2a02:ec0::/29",
    ],
  );
});

Deno.test("get=network names each list's matched entry, after the databases", async () => {
  const dataDir = await writeBaseDataDir();
  const feeds = startFeedServer();
  try {
    feeds.routes.set("/threat", { body: "10.1.0.0/16\n" });
    feeds.routes.set("/tor", { body: "10.1.2.3\n" });
    const sources = [
      feedSource(feeds, "blocklist", "threat", "/threat"),
      feedSource(feeds, "exits", "tor", "/tor"),
    ];
    const { outcomes } = await update(dataDir, sources);
    assert.ok(outcomes.every((o) => o.status === "updated"), JSON.stringify(outcomes));
    const data = await openDataSet(dataDir, { configured: sources });
    const lookup = createLookup({
      data,
      now: () => FIXED_NOW,
      parseUserAgent: createUserAgentParser(),
    });
    assert.deepEqual(lookup.find("10.1.2.3", { selection: network }).network, [
      { source: "test-asn", kind: "asn", network: "0.0.0.0/0" },
      { source: "exits", kind: "tor", network: "10.1.2.3" },
      { source: "blocklist", kind: "threat", network: "10.1.0.0/16" },
    ]);
  } finally {
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("GET /ip/{ip}?get=network answers the matched networks in JSON and XML", async () => {
  const app = await fixtureApp();
  const res = await app.request("/ip/81.2.69.160?get=connection,network");
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(Object.keys(body.data), ["ip", "connection", "network"]);
  assert.equal(body.data.network[1].network, "81.2.69.0/24");
  const xml = await (await app.request("/ip/81.2.69.160?get=network&format=xml")).text();
  assert.ok(xml.includes("<network><item><source>city</source><kind>city</kind>"), xml);
});
