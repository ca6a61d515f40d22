/**
 * A data directory with two small security lists installed by `data update`
 * from a local feed server: the Tor exit fixture and a one-line blocklist.
 * For the page's explanation of its verdict (the default data has no lists).
 */

import assert from "node:assert/strict";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import {
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "../../data/update/_feed_server.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;

/** On both lists: a Tor exit inside the blocklisted /24. */
export const LISTED = "185.241.208.232";

export interface ListedData {
  dataDir: string;
  /** The sources file the server reads (IPINTEL_SOURCES). */
  sourcesFile: string;
  sources: SourceSpec[];
}

/** Installs the lists into a new base data directory; the caller removes `dataDir`. */
export async function writeListedDataDir(): Promise<ListedData> {
  const feeds = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    feeds.routes.set("/tor", {
      body: await Deno.readFile(`${FIXTURES}tor_bulk_exit_list.txt`),
      lastModified: "Wed, 18 Nov 2026 10:00:00 GMT", // the Tor list's date
    });
    feeds.routes.set("/threat", { body: "185.241.208.0/24\n" });
    const sources = [
      feedSource(feeds, "tor-exits", "tor", "/tor"),
      feedSource(feeds, "blocklist", "threat", "/threat"),
    ];
    // The blocklist states no date: the download's.
    const { outcomes } = await update(dataDir, sources, {
      now: () => new Date("2026-11-20T06:00:00Z"),
    });
    assert.ok(outcomes.every((o) => o.status === "updated"), JSON.stringify(outcomes));
    const sourcesFile = `${dataDir}/sources.json`;
    await Deno.writeTextFile(sourcesFile, JSON.stringify({ sources }));
    return { dataDir, sourcesFile, sources };
  } catch (error) {
    await Deno.remove(dataDir, { recursive: true });
    throw error;
  } finally {
    await feeds.close();
  }
}
