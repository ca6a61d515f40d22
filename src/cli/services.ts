/** Assembles the lookup core from configuration: the one place dependencies are wired. */

import type { Config } from "../config.ts";
import { createEnrichment } from "../enrich/warm.ts";
import { createLookup, type Lookup } from "../lookup/lookup.ts";
import { type DataSet, openDataSet } from "../sources/data_set.ts";
import { createUserAgentParser } from "../ua/parse.ts";

export interface Services {
  data: DataSet;
  lookup: Lookup;
}

/** Opens the data directory and builds the lookup function over it. */
export async function createServices(config: Config): Promise<Services> {
  const data = await openDataSet(config.dataDir, { cacheSize: config.cacheSize });
  const lookup = createLookup({
    data,
    now: () => new Date(),
    parseUserAgent: createUserAgentParser({ cacheSize: 10_000 }),
    enrichment: createEnrichment({ warm: true }),
  });
  return { data, lookup };
}
