/** Assembles the lookup core from configuration: the one place dependencies are wired. */

import type { Config } from "../config.ts";
import { createEnrichment, type Enrichment, warmInBackground } from "../enrich/warm.ts";
import { createLookup, type Lookup } from "../lookup/lookup.ts";
import {
  type DataSet,
  openDataSet,
  type OperatorDatabase,
  type VerifiedFiles,
} from "../sources/data_set.ts";
import { readSourcesFile } from "../sources/sources_file.ts";
import { createUserAgentParser } from "../ua/parse.ts";

export interface Services {
  data: DataSet;
  lookup: Lookup;
}

/** Parts that outlive a data set: warmed caches are shared across reloads. */
export interface SharedParts {
  enrichment: Enrichment;
  parseUserAgent: ReturnType<typeof createUserAgentParser>;
}

/** Opens the data directory and builds the lookup function over it. */
export async function createServices(config: Config, shared?: SharedParts): Promise<Services> {
  return servicesFor(await openServedData(config), shared ?? createSharedParts());
}

/** The lookup function over an opened data set. */
export function servicesFor(data: DataSet, shared: SharedParts): Services {
  const lookup = createLookup({
    data,
    now: () => new Date(),
    parseUserAgent: shared.parseUserAgent,
    enrichment: shared.enrichment,
  });
  return { data, lookup };
}

/**
 * The configured data set: the data directory's files and the operator's own
 * databases. `share` keeps the verified bytes in shared memory for workers.
 */
export async function openServedData(
  config: Config,
  options: { share?: boolean; verified?: VerifiedFiles } = {},
): Promise<DataSet> {
  const configured = await readSourcesFile(config.sourcesFile).then((f) => f.sources);
  return await openDataSet(config.dataDir, {
    cacheSize: config.cacheSize,
    databases: operatorDatabases(config),
    configured,
    ...options,
  });
}

/**
 * The enrichment and user-agent caches. Country facts cost an ICU set-up on
 * first use (about 0.4 ms each; time zones come from a table): `now` pays them
 * all at once (about 0.1 s), `background` in slices between requests.
 */
export function createSharedParts(warm: "now" | "background" = "now"): SharedParts {
  const enrichment = createEnrichment({ warm: warm === "now" });
  if (warm === "background") warmInBackground(enrichment);
  return { enrichment, parseUserAgent: createUserAgentParser() };
}

/** The operator's own databases from IPINTEL_*_DB. */
function operatorDatabases(config: Config): OperatorDatabase[] {
  const all: [OperatorDatabase["kind"], string | null, string][] = [
    ["city", config.cityDb, "IPINTEL_CITY_DB"],
    ["asn", config.asnDb, "IPINTEL_ASN_DB"],
    ["isp", config.ispDb, "IPINTEL_ISP_DB"],
    ["connection-type", config.connectionTypeDb, "IPINTEL_CONNECTION_TYPE_DB"],
    ["anonymous-ip", config.anonymousIpDb, "IPINTEL_ANONYMOUS_IP_DB"],
    ["domain", config.domainDb, "IPINTEL_DOMAIN_DB"],
  ];
  return all.flatMap(([kind, path, variable]) => path ? [{ kind, path, variable }] : []);
}
