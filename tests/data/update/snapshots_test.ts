/**
 * The full shared snapshots (../shared/data/feeds, present in CI, absent in a
 * user's clone): a full update from all of them served locally, then every row
 * of SAMPLES.tsv and SAMPLES-2.tsv must answer as listed.
 */

import assert from "node:assert/strict";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { feedSource, startFeedServer, update, writeBaseDataDir } from "./_feed_server.ts";
import { ignoredName } from "../../_skip.ts";

const SNAPSHOTS = new URL("../../../../shared/data/feeds/", import.meta.url).pathname;
const present = await Deno.stat(`${SNAPSHOTS}SAMPLES.tsv`).then(() => true, () => false);
const absent = present ? null : "../shared/data/feeds not present";

const FORMATS: Record<string, SourceSpec["format"]> = {
  "aws_ip-ranges.json": "aws-json",
  "google_cloud.json": "google-json",
  "spamhaus_drop_v4.json": "drop-json",
  "oracle_public_ip_ranges.json": "oracle-json",
  "azure_servicetags_public.json": "azure-json",
  "icloud_private_relay_egress-ip-ranges.csv": "geofeed",
  "stamparm_ipsum.txt": "ipsum",
};

/** SAMPLES.tsv and SAMPLES-2.tsv rows: file, address, expected membership. */
function samples(): { file: string; ip: string; member: boolean }[] {
  return ["SAMPLES.tsv", "SAMPLES-2.tsv"].flatMap((tsv) =>
    Deno.readTextFileSync(`${SNAPSHOTS}${tsv}`).split("\n").slice(1)
  )
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [file, ip, member] = line.split("\t");
      return { file: file!, ip: ip!, member: member === "yes" };
    });
}

Deno.test({
  name: ignoredName(
    "data update from every shared snapshot answers each SAMPLES.tsv and SAMPLES-2.tsv row",
    absent,
  ),
  ignore: !present,
  async fn() {
    const rows = samples();
    const files = [...new Set(rows.map((r) => r.file))];
    assert.equal(rows.length, 300);
    const server = startFeedServer();
    try {
      for (const file of files) {
        server.routes.set(`/${file}`, { body: await Deno.readFile(`${SNAPSHOTS}${file}`) });
      }
      // One data directory per file: membership is per list, and a kind is the union of its lists.
      for (const file of files) {
        const dataDir = await writeBaseDataDir();
        try {
          const name = file.replace(/[^a-z0-9]+/gi, "-");
          const spec = feedSource(server, name, "threat", `/${file}`, {
            format: FORMATS[file] ?? "ip-list",
            ...(FORMATS[file] === "ipsum" ? { minCount: 1 } : {}),
          });
          const { outcomes } = await update(dataDir, [spec]);
          assert.equal(outcomes[0]!.status, "updated", outcomes[0]!.detail);
          const data = await openDataSet(dataDir);
          for (const row of rows.filter((r) => r.file === file)) {
            const listed = data.risk.signals(parseIp(row.ip), null).blocklisted;
            assert.equal(listed, row.member, `${file} ${row.ip}`);
          }
        } finally {
          await Deno.remove(dataDir, { recursive: true });
        }
      }
    } finally {
      await server.close();
    }
  },
});

Deno.test({
  name: ignoredName(
    "data update from the snapshots as the default kinds: a Tor exit is isTor true, isThreat high",
    absent,
  ),
  ignore: !present,
  async fn() {
    const server = startFeedServer();
    const dataDir = await writeBaseDataDir();
    try {
      const kinds: [string, SourceSpec["kind"]][] = [
        ["tor_bulk_exit_list.txt", "tor"],
        ["x4bnet_vpn_ipv4.txt", "vpn"],
        ["x4bnet_vpn_ipv6.txt", "vpn"],
        ["firehol_level1.netset", "threat"],
        ["x4bnet_datacenter_ipv4.txt", "hosting"],
        ["x4bnet_datacenter_ipv6.txt", "hosting"],
      ];
      const sources = [];
      for (const [file, kind] of kinds) {
        server.routes.set(`/${file}`, { body: await Deno.readFile(`${SNAPSHOTS}${file}`) });
        sources.push(feedSource(server, file.replace(/[^a-z0-9]+/gi, "-"), kind, `/${file}`));
      }
      const { outcomes } = await update(dataDir, sources);
      assert.ok(outcomes.every((o) => o.status === "updated"), JSON.stringify(outcomes));
      const data = await openDataSet(dataDir);
      // Listed in tor_bulk_exit_list.txt (see the snapshots' README).
      for (const ip of ["185.241.208.232", "185.220.101.21", "77.48.28.204"]) {
        const s = data.risk.signals(parseIp(ip), null);
        assert.equal(s.tor, true, ip);
      }
      const lookup = createLookup({
        data,
        now: () => new Date(),
        parseUserAgent: createUserAgentParser(),
      });
      const security = lookup.find("185.220.101.21").security;
      assert.equal(security.isTor, true);
      assert.equal(security.isThreat, "high");
    } finally {
      await server.close();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
