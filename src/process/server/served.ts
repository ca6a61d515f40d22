/** Assembles the lookup core from configuration: the one place dependencies are wired. */

import { resolve } from "node:path";
import type { Config } from "../../base/config.ts";
import { createEnrichment, type Enrichment, warmInBackground } from "../../core/place/warm.ts";
import { createLookup } from "../../core/lookup/lookup.ts";
import { type Served, servedOf } from "../../service/http/env.ts";
import {
  type DataSet,
  openDataSet,
  type OperatorDatabase,
  type VerifiedFileCache,
  type VerifiedFiles,
} from "../../data/sources/data_set.ts";
import { isDefaultSourcesFile } from "../../data/sources/manifest.ts";
import { readSourcesFile, type SourceSpec } from "../../data/sources/sources_file.ts";
import { createUserAgentParser } from "../../core/ua/parse.ts";

export type { Served };

/** Parts that outlive a data set: warmed caches are shared across reloads. */
export interface SharedParts {
  enrichment: Enrichment;
  parseUserAgent: ReturnType<typeof createUserAgentParser>;
}

/** Opens the data directory and builds the lookup function over it. */
export async function openServed(config: Config, shared?: SharedParts): Promise<Served> {
  return servedFor(await openServedData(config), shared ?? createSharedParts());
}

/** The lookup function over an opened data set. */
export function servedFor(data: DataSet, shared: SharedParts): Served {
  const lookup = createLookup({
    data,
    now: millisecondClock(),
    parseUserAgent: shared.parseUserAgent,
    enrichment: shared.enrichment,
  });
  return servedOf(data, lookup);
}

/**
 * The current time, one Date per millisecond: a bulk list or `lookup -` answers
 * many addresses within one, and a Date made for each would be allocation on
 * the hot path that changes nothing. Its readers only read it (never set a field).
 */
function millisecondClock(): () => Date {
  let last = new Date();
  return () => {
    const ms = Date.now();
    return ms === last.getTime() ? last : (last = new Date(ms));
  };
}

/**
 * A data set one isolate read and verified, as it is handed to the others:
 * everything they need to open it without reading a file (files on disk may
 * have changed since, or be half written).
 */
export interface Handoff {
  files: VerifiedFiles;
  /** The sources file's entries as that isolate read them (to report the absent ones). */
  configured: readonly SourceSpec[];
}

/**
 * The configured data set: the data directory's files and the operator's own
 * databases. `share` keeps the verified bytes in shared memory for workers;
 * `handoff` opens a set another isolate verified, without reading any file.
 */
export async function openServedData(
  config: Config,
  options: {
    share?: boolean;
    handoff?: Handoff;
    configured?: readonly SourceSpec[];
    /** Files a set opened before verified (a reload reuses the unchanged ones). */
    verifiedFiles?: VerifiedFileCache;
  } = {},
): Promise<DataSet> {
  const configured = options.handoff?.configured ?? options.configured ??
    (await readSourcesFile(config.sourcesFile)).sources;
  return await openDataSet(config.dataDir, {
    cacheSize: config.cacheSize,
    databases: operatorDatabases(config),
    configured,
    sourcesFile: resolve(config.sourcesFile),
    // Not given a sources file: the one the data was installed from (manifest.ts serverSourcesFile).
    preferInstalled: isDefaultSourcesFile(resolve(config.sourcesFile)),
    scheduledUpdates: config.updateInterval > 0,
    share: options.share,
    verified: options.handoff?.files,
    verifiedFiles: options.verifiedFiles,
  });
}

/** Opens and verifies the data set once, in shared memory, with the handoff for the workers. */
export async function openSharedData(
  config: Config,
  verifiedFiles?: VerifiedFileCache,
): Promise<{ data: DataSet; handoff: Handoff }> {
  const configured = (await readSourcesFile(config.sourcesFile)).sources;
  const data = await openServedData(config, { share: true, configured, verifiedFiles });
  if (!data.files) throw new Error("The data set was not opened for sharing");
  return { data, handoff: { files: data.files, configured } };
}

/**
 * The enrichment and user-agent caches. Country facts cost an ICU set-up on
 * first use (time zones come from a table), too slow for a request to pay:
 * `now` pays them all at once, `background` in slices between requests.
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
