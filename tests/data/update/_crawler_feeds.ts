/**
 * The crawler snapshots (tests/fixtures/feeds/crawlers, copied from
 * ../shared/data/feeds/crawlers) in the publishers' JSON shape, served by the
 * feed server at the paths of the default sources file's crawler entries, beside
 * X4BNet's data-centre list (trimmed to the blocks that hold the crawlers'
 * addresses) and AWS's ranges; and a data directory updated from them.
 */

import sourcesJson from "../../../data/sources.json" with { type: "json" };
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { type FeedServer, update, writeBaseDataDir } from "./_feed_server.ts";

export const CRAWLER_FIXTURES = new URL("../../fixtures/feeds/crawlers/", import.meta.url).pathname;
const FEEDS = new URL("../../fixtures/feeds/", import.meta.url).pathname;

/** The prefixes of a snapshot file, one a line. */
export function snapshotPrefixes(file: string): string[] {
  return Deno.readTextFileSync(`${CRAWLER_FIXTURES}${file}`).split("\n").map((l) => l.trim())
    .filter((l) => l !== "");
}

/** A publisher's JSON file of `prefixes`; `mark` adds U+200B inside every `mark`-th prefix (Bing's). */
export function publisherJson(prefixes: readonly string[], mark = 0): string {
  return JSON.stringify(
    {
      creationTime: "2026-08-22T10:00:00.000000",
      prefixes: prefixes.map((p, i) => {
        const text = mark > 0 && i % mark === 0 ? `${p.replace("/", "\u200b/")}\u200b` : p;
        return p.includes(":") ? { ipv6Prefix: text } : { ipv4Prefix: text };
      }),
    },
    null,
    2,
  );
}

/** Which snapshot answers each default crawler source (the merged ones answer each of theirs). */
export const SNAPSHOT_OF: Record<string, { files: string[]; mark?: number }> = {
  "google-googlebot": { files: ["googlebot-ipv4.txt", "googlebot-ipv6.txt"] },
  "bing-bingbot": { files: ["bing-ipv4.txt"], mark: 3 },
  "openai-gptbot": { files: ["openai-ipv4.txt"] },
  "duckduckgo-duckduckbot": { files: ["duckduckbot-ipv4.txt"] },
  "perplexity-perplexitybot": { files: ["perplexity-ipv4.txt"] },
};

/** The default sources file's crawler entries, as parsed (urls as written). */
export function defaultCrawlerSources(): SourceSpec[] {
  return (sourcesJson.sources as unknown as SourceSpec[]).filter((s) => s.kind === "crawler");
}

/**
 * The sources of the acceptance: the default crawler entries re-pointed to the
 * server (those without a snapshot answer 404: not installed), X4BNet's
 * data-centre list and AWS's ranges, as the default sources file names them.
 */
export async function serveCrawlerSources(server: FeedServer): Promise<SourceSpec[]> {
  const specs: SourceSpec[] = [];
  for (const spec of defaultCrawlerSources()) {
    const path = `/${spec.name}.json`;
    const snapshot = SNAPSHOT_OF[spec.name];
    if (snapshot) {
      const prefixes = snapshot.files.flatMap(snapshotPrefixes);
      server.routes.set(path, { body: publisherJson(prefixes, snapshot.mark) });
    }
    specs.push({ ...spec, url: server.url(path) });
  }
  const byName = new Map((sourcesJson.sources as unknown as SourceSpec[]).map((s) => [s.name, s]));
  server.routes.set("/datacenter.txt", {
    body: await Deno.readFile(`${CRAWLER_FIXTURES}x4bnet_datacenter_ipv4.txt`),
  });
  server.routes.set("/aws.json", { body: await Deno.readFile(`${FEEDS}aws_ip-ranges.json`) });
  specs.push({ ...byName.get("x4bnet-datacenter-ipv4")!, url: server.url("/datacenter.txt") });
  specs.push({ ...byName.get("aws")!, url: server.url("/aws.json") });
  return specs;
}

/** A data directory updated from `serveCrawlerSources`; the caller removes it. */
export async function writeCrawlerDataDir(server: FeedServer): Promise<string> {
  const dir = await writeBaseDataDir();
  const { outcomes } = await update(dir, await serveCrawlerSources(server));
  for (const o of outcomes) {
    const served = o.name in SNAPSHOT_OF || !o.name.match(/^(google|bing|openai|apple|duck|perp)/);
    if (served && o.status !== "updated") throw new Error(`${o.name}: ${o.status} ${o.detail}`);
  }
  return dir;
}
