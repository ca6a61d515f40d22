/**
 * The ASN view's list shares on lists installed the way an operator installs
 * them (`data update` from a local feed server): network lists compiled into
 * trees, and an AS-number list.
 */

import assert from "node:assert/strict";
import { createAsnView } from "../../../src/core/asn/view.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import {
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../../data/update/_feed_server.ts";
import { asnDatabase } from "./_fixtures.ts";

Deno.test("the ASN view counts how much of an AS each installed list names", async () => {
  const dataDir = await writeBaseDataDir();
  const feeds = startFeedServer();
  try {
    feeds.routes.set("/asn.mmdb", { body: asnDatabase() });
    // 10.0.0.0/23 is AS100's: a /25 and one address of it; 10.0.2.0/24 is AS200's.
    feeds.routes.set("/threat", { body: "10.0.0.0/25\n10.0.2.7\n2001:db8:1::/64\n" });
    feeds.routes.set("/tor", { body: "10.0.1.9\n10.0.1.10\n172.16.0.1\n" });
    feeds.routes.set("/hosting-asns", { body: "AS200\n" });
    const sources: SourceSpec[] = [
      feedSource(feeds, "fixture-asn", "asn", "/asn.mmdb", { format: "mmdb" }),
      feedSource(feeds, "blocklist", "threat", "/threat"),
      feedSource(feeds, "exits", "tor", "/tor"),
      feedSource(feeds, "hosters", "hosting", "/hosting-asns", { format: "asn-list" }),
    ];
    const { outcomes } = await update(dataDir, sources);
    assert.ok(outcomes.every((o) => o.status === "updated"), JSON.stringify(outcomes));
    const data = await openDataSet(dataDir, { configured: sources });
    const view = createAsnView();

    assert.deepEqual((await view.data("100", data)).lists, [
      { source: "exits", kind: "tor", ipv4Addresses: 2, ipv6Slash64s: 0 },
      { source: "blocklist", kind: "threat", ipv4Addresses: 128, ipv6Slash64s: 1 },
    ]);
    // An AS-number list names the whole AS.
    assert.deepEqual((await view.data("200", data)).lists, [
      { source: "hosters", kind: "hosting", ipv4Addresses: 256, ipv6Slash64s: 0 },
      { source: "blocklist", kind: "threat", ipv4Addresses: 1, ipv6Slash64s: 0 },
    ]);
  } finally {
    await feeds.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
